import { describe, expect, it } from "vitest";
import { checkLiveness, describeError, evaluateReadiness, probeServerVersion } from "./health";

const clean = { pending: [], unknown: [], changed: [] };

describe("checkLiveness", () => {
  it("answers ok without touching anything", () => {
    expect(checkLiveness()).toEqual({ status: "ok" });
  });
});

describe("probeServerVersion", () => {
  it("accepts 18.0 and newer", () => {
    expect(probeServerVersion(180000)).toEqual({ ok: true, serverVersionNum: 180000 });
    expect(probeServerVersion(190002)).toEqual({ ok: true, serverVersionNum: 190002 });
  });

  it("refuses 17 with a message naming both versions", () => {
    const probe = probeServerVersion(170005);
    expect(probe.ok).toBe(false);
    expect(probe.error).toMatch(/PostgreSQL 17 is too old/);
    expect(probe.error).toMatch(/PostgreSQL 18/);
  });
});

describe("evaluateReadiness", () => {
  it("is ready when the database answers and no migration is pending or unknown", () => {
    expect(evaluateReadiness({ ok: true, serverVersionNum: 180001 }, clean).ok).toBe(true);
  });

  it("is not ready with a pending migration", () => {
    expect(evaluateReadiness({ ok: true }, { ...clean, pending: ["0004_next"] }).ok).toBe(false);
  });

  it("is not ready with an unknown migration: the database is ahead of this build", () => {
    expect(evaluateReadiness({ ok: true }, { ...clean, unknown: ["0009_future"] }).ok).toBe(false);
  });

  it("stays ready when an applied file changed: reported, not fatal", () => {
    const readiness = evaluateReadiness({ ok: true }, { ...clean, changed: ["0001_platform"] });
    expect(readiness.ok).toBe(true);
    expect(readiness.migrations.changed).toEqual(["0001_platform"]);
  });

  it("is not ready when the database is down or the migrations could not be read", () => {
    expect(evaluateReadiness({ ok: false, error: "ECONNREFUSED" }, clean).ok).toBe(false);
    expect(evaluateReadiness({ ok: true }, { ...clean, error: "permission denied" }).ok).toBe(false);
  });
});

describe("describeError", () => {
  it("uses the message when there is one", () => {
    expect(describeError(new Error("boom"))).toBe("boom");
  });

  it("reads the causes of an AggregateError whose own message is empty", () => {
    const refused = (address: string) => Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: "ECONNREFUSED" });
    const error = new AggregateError([refused("::1:5432"), refused("127.0.0.1:5432")], "");
    expect(describeError(error)).toBe("connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432");
  });

  it("falls back to the code, then the name", () => {
    expect(describeError(Object.assign(new Error(""), { code: "ETIMEDOUT" }))).toBe("ETIMEDOUT");
    expect(describeError(new TypeError(""))).toBe("TypeError");
    expect(describeError("plain")).toBe("plain");
  });
});
