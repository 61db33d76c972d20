import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config";

const base = { DATABASE_URL: "postgres://u:p@localhost:5432/db", NODE_FLOW_SECRET: "x".repeat(32) };

function problems(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("loadConfig: HTTP and metrics settings", () => {
  it("defaults: private networks refused, metrics on 9464, no token", () => {
    const config = loadConfig(base);
    expect(config.httpAllowPrivateNetworks).toBe(false);
    expect(config.metricsPort).toBe(9464);
    expect(config.metricsToken).toBeUndefined();
  });

  it("reads NODE_FLOW_HTTP_ALLOW_PRIVATE as a strict boolean (\"false\" is false)", () => {
    expect(loadConfig({ ...base, NODE_FLOW_HTTP_ALLOW_PRIVATE: "true" }).httpAllowPrivateNetworks).toBe(true);
    expect(loadConfig({ ...base, NODE_FLOW_HTTP_ALLOW_PRIVATE: "1" }).httpAllowPrivateNetworks).toBe(true);
    expect(loadConfig({ ...base, NODE_FLOW_HTTP_ALLOW_PRIVATE: "false" }).httpAllowPrivateNetworks).toBe(false);
    expect(loadConfig({ ...base, NODE_FLOW_HTTP_ALLOW_PRIVATE: "0" }).httpAllowPrivateNetworks).toBe(false);
  });

  it("takes a metrics port from 0 (off) to 65535, and a token of 16 characters or more", () => {
    const config = loadConfig({ ...base, NODE_FLOW_METRICS_PORT: "0", NODE_FLOW_METRICS_TOKEN: "t".repeat(16) });
    expect(config.metricsPort).toBe(0);
    expect(config.metricsToken).toBe("t".repeat(16));
    expect(loadConfig({ ...base, NODE_FLOW_METRICS_PORT: "65535" }).metricsPort).toBe(65535);
  });

  it("reports every bad value at once", () => {
    const found = problems({
      ...base,
      NODE_FLOW_HTTP_ALLOW_PRIVATE: "yes please",
      NODE_FLOW_METRICS_PORT: "70000",
      NODE_FLOW_METRICS_TOKEN: "short",
    });
    expect(found).toHaveLength(3);
    expect(found.join("\n")).toMatch(/NODE_FLOW_HTTP_ALLOW_PRIVATE must be true or false/);
    expect(found.join("\n")).toMatch(/NODE_FLOW_METRICS_PORT must be 0 \(off\) to 65535/);
    expect(found.join("\n")).toMatch(/NODE_FLOW_METRICS_TOKEN must be at least 16 characters/);
    expect(problems({ ...base, NODE_FLOW_METRICS_PORT: "1.5" }).join("\n")).toMatch(/NODE_FLOW_METRICS_PORT must be an integer/);
    expect(problems({ ...base, NODE_FLOW_METRICS_PORT: "-1" }).join("\n")).toMatch(/NODE_FLOW_METRICS_PORT must be 0/);
  });
});

describe("loadConfig: workload metric labels and tracing", () => {
  it("defaults: no allow-lists (the first names seen), tracing off", () => {
    const config = loadConfig(base);
    expect(config.metricsWorkflows).toBeUndefined();
    expect(config.metricsTasks).toBeUndefined();
    expect(config.tracing).toBeUndefined();
    expect(loadConfig({ ...base, OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }).tracing).toBeUndefined();
  });

  it("reads the allow-lists as comma-separated names, trimmed, empty entries dropped", () => {
    const config = loadConfig({ ...base, NODE_FLOW_METRICS_WORKFLOWS: " orders , refunds,,", NODE_FLOW_METRICS_TASKS: "charge" });
    expect(config.metricsWorkflows).toEqual(["orders", "refunds"]);
    expect(config.metricsTasks).toEqual(["charge"]);
    // Set but empty: an empty list, every name "other" — not the first-seen default.
    expect(loadConfig({ ...base, NODE_FLOW_METRICS_WORKFLOWS: "" }).metricsWorkflows).toEqual([]);
  });

  it("exports traces over OTLP/HTTP to the endpoint's /v1/traces, or to the traces endpoint as given", () => {
    expect(loadConfig({ ...base, OTEL_TRACES_EXPORTER: "otlp" }).tracing).toEqual({ url: "http://localhost:4318/v1/traces", serviceName: "node-flow" });
    expect(loadConfig({ ...base, OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/", OTEL_SERVICE_NAME: "nf-prod" }).tracing).toEqual({
      url: "http://collector:4318/v1/traces",
      serviceName: "nf-prod",
    });
    expect(
      loadConfig({
        ...base,
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example.test/ingest",
      }).tracing?.url,
    ).toBe("https://traces.example.test/ingest");
  });

  it("names a bad exporter or endpoint", () => {
    const found = problems({ ...base, OTEL_TRACES_EXPORTER: "jaeger", OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "nowhere" });
    expect(found).toHaveLength(3);
    expect(found.join("\n")).toMatch(/OTEL_TRACES_EXPORTER must be none or otlp/);
    expect(found.join("\n")).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/);
    expect(found.join("\n")).toMatch(/OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http\(s\) URL/);
  });
});
