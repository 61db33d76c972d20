import { createServer } from "node:http";
import type { IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { runMcpTask } from "./mcp-tasks";

/** A real MCP server on loopback (the SDK's server side, stateless streamable HTTP), refusing calls without the token. */
let server: Server;
let endpoint: string;
const seenAuth: string[] = [];

function mcpServer(): McpServer {
  const mcp = new McpServer({ name: "test-tools", version: "1" });
  mcp.registerTool("add", { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
    structuredContent: { sum: a + b },
  }));
  mcp.registerTool("explode", { description: "Always fails" }, () => ({ content: [{ type: "text", text: "boom" }], isError: true }));
  return mcp;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void (async () => {
      seenAuth.push(String(req.headers.authorization));
      if (req.headers.authorization !== "Bearer t0ken") {
        res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "unauthorized" }));
        return;
      }
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const mcp = mcpServer();
      res.on("close", () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, await readBody(req));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const open = { allowPrivateNetworks: true };
const auth = { Authorization: "Bearer t0ken" };

describe("MCP tasks against a streamable-HTTP server", () => {
  it("lists the server's tools with their input schemas", async () => {
    const outcome = await runMcpTask("LIST_MCP_TOOLS", { mcpServer: endpoint, headers: auth }, open);
    expect(outcome.status).toBe("COMPLETED");
    const tools = outcome.output.tools as { name: string; description: string; inputSchema: { properties?: object } }[];
    expect(tools.map((t) => t.name).sort()).toEqual(["add", "explode"]);
    expect(tools.find((t) => t.name === "add")?.inputSchema.properties).toHaveProperty("a");
    expect(seenAuth.at(-1)).toBe("Bearer t0ken");
  });

  it("calls a tool with arguments and returns its content, structured content and text", async () => {
    const outcome = await runMcpTask("CALL_MCP_TOOL", { mcpServer: endpoint, headers: auth, method: "add", arguments: { a: 2, b: 40 } }, open);
    expect(outcome.status).toBe("COMPLETED");
    expect(outcome.output).toMatchObject({ text: "42", isError: false, structuredContent: { sum: 42 }, content: [{ type: "text", text: "42" }] });
    expect(typeof outcome.output.latencyMs).toBe("number");
  });

  it("fails, retryably, when the tool answers an error, keeping what it said", async () => {
    const outcome = await runMcpTask("CALL_MCP_TOOL", { mcpServer: endpoint, headers: auth, method: "explode" }, open);
    expect(outcome.status).toBe("FAILED");
    expect(outcome.reason).toContain('tool "explode" answered an error: boom');
    expect(outcome.output).toMatchObject({ isError: true, text: "boom" });
  });

  it("fails terminally on a 401 from the server, naming the server without its query", async () => {
    const outcome = await runMcpTask("LIST_MCP_TOOLS", { mcpServer: `${endpoint}?key=hidden` }, open);
    expect(outcome.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(outcome.reason).toContain(`${endpoint} answered 401`);
    expect(outcome.reason).not.toContain("hidden");
  });

  it("refuses a private address unless private networks are allowed", async () => {
    const outcome = await runMcpTask("LIST_MCP_TOOLS", { mcpServer: endpoint, headers: auth }, { allowPrivateNetworks: false });
    expect(outcome.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(outcome.reason).toContain("NODE_FLOW_HTTP_ALLOW_PRIVATE");
  });

  it("refuses bad fields before any request", async () => {
    const before = seenAuth.length;
    expect((await runMcpTask("LIST_MCP_TOOLS", { mcpServer: "not a url" }, open)).reason).toContain("mcpServer is not an absolute URL");
    expect((await runMcpTask("CALL_MCP_TOOL", { mcpServer: endpoint }, open)).reason).toContain("method must name the tool");
    expect((await runMcpTask("CALL_MCP_TOOL", { mcpServer: endpoint, method: "add", arguments: [1] }, open)).reason).toContain("arguments must be an object");
    expect((await runMcpTask("LIST_MCP_TOOLS", { mcpServer: endpoint, headers: { X: { nested: 1 } } }, open)).reason).toContain('header "X" must be a string');
    expect(seenAuth.length).toBe(before);
  });
});
