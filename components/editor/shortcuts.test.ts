import { describe, expect, it } from "vitest";
import { SHORTCUTS, shortcutFor } from "./shortcuts";

const key = (k: string, mods: Partial<{ metaKey: boolean; ctrlKey: boolean; shiftKey: boolean; altKey: boolean }> = {}) => ({
  key: k,
  metaKey: false,
  ctrlKey: false,
  shiftKey: false,
  altKey: false,
  ...mods,
});

describe("shortcutFor", () => {
  it("maps Ctrl on Linux and ⌘ on a Mac", () => {
    expect(shortcutFor(key("z", { ctrlKey: true }), false)).toBe("undo");
    expect(shortcutFor(key("Z", { ctrlKey: true, shiftKey: true }), false)).toBe("redo");
    expect(shortcutFor(key("z", { metaKey: true }), true)).toBe("undo");
    expect(shortcutFor(key("z", { ctrlKey: true }), true)).toBeNull();
    expect(shortcutFor(key("s", { ctrlKey: true }), false)).toBe("save");
    expect(shortcutFor(key("Delete"), false)).toBe("delete");
    expect(shortcutFor(key("L", { shiftKey: true }), false)).toBe("layout");
    expect(shortcutFor(key("?", { shiftKey: true }), false)).toBe("help");
    expect(shortcutFor(key("l"), false)).toBeNull();
  });

  it("every listed key combination reaches its action", () => {
    for (const s of SHORTCUTS) {
      for (const combo of s.keys) {
        const parts = combo === "?" ? ["?"] : combo.split("+");
        const k = parts.at(-1)!;
        const event = key(k.length === 1 ? k.toLowerCase() : k, { ctrlKey: parts.includes("Mod"), shiftKey: parts.includes("Shift") || k === "?" });
        expect(shortcutFor(event, false), combo).toBe(s.action);
      }
    }
  });
});
