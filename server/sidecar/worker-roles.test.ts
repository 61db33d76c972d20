import { describe, expect, it } from "vitest";
import { ConfigError } from "../lib/config";
import { resolveWorkerRoles } from "./worker-roles";

describe("resolveWorkerRoles", () => {
  it("defaults to decider,poller", () => {
    expect(resolveWorkerRoles(undefined)).toEqual(["decider", "poller"]);
  });

  it("drops api, which the web process serves", () => {
    expect(resolveWorkerRoles("api,decider")).toEqual(["decider"]);
  });

  it("refuses api alone with a message naming NODE_FLOW_ROLES", () => {
    expect(() => resolveWorkerRoles("api")).toThrow(ConfigError);
    try {
      resolveWorkerRoles("api");
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([expect.stringMatching(/^NODE_FLOW_ROLES=api leaves the worker nothing to run/)]);
    }
  });

  it("refuses unknown roles", () => {
    expect(() => resolveWorkerRoles("decider,decidr")).toThrow(/NODE_FLOW_ROLES has unknown role "decidr"/);
  });
});
