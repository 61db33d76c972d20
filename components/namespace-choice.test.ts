import { describe, expect, it } from "vitest";
import { chooseNamespace, namespaceCookie } from "./namespace-choice";

const visible = [{ name: "billing" }, { name: "default" }, { name: "shipping" }];

describe("chooseNamespace", () => {
  it("keeps the remembered choice while the user can see it", () => {
    expect(chooseNamespace(visible, "shipping")).toBe("shipping");
  });

  it("falls back to default, then to the first, when the choice is gone or absent", () => {
    expect(chooseNamespace(visible, "removed-from")).toBe("default");
    expect(chooseNamespace(visible, undefined)).toBe("default");
    expect(chooseNamespace([{ name: "billing" }, { name: "shipping" }], "default")).toBe("billing");
  });

  it("is null for a user who can see no namespace", () => {
    expect(chooseNamespace([], "default")).toBeNull();
  });
});

describe("namespaceCookie", () => {
  it("is readable on every path and survives a browser restart", () => {
    expect(namespaceCookie("billing")).toBe("nf_namespace=billing; Path=/; Max-Age=31536000; SameSite=Lax");
  });
});
