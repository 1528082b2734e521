// An MCP host nobody here wrote: the official TypeScript SDK drives the
// built imprint binary over stdio or streamable HTTP, then prints what it
// saw as one JSON line on stdout for cmd/imprint's TestMCPTypeScriptSDK to
// check. It exits 1 with the reason on stderr when a step fails.
//
//   node client.mjs stdio BINARY DATA_DIR [ARG...]   (more arguments of imprint mcp)
//   node client.mjs http URL TOKEN                   (URL of /mcp, with its query)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, a, b, ...rest] = process.argv.slice(2);
const root = "file:///work/projects/tea-shop";

function fail(msg) {
  process.stderr.write(`client.mjs: ${msg}\n`);
  process.exit(1);
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) fail(`${name} ${JSON.stringify(args)}: tool error ${JSON.stringify(res.content)}`);
  if (!res.structuredContent) fail(`${name}: no structured content`);
  return res.structuredContent;
}

let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({
    command: a,
    args: ["mcp", "--data-dir", b, "--user", "ana", ...rest],
    env: { HOME: b, PATH: process.env.PATH },
    stderr: "inherit",
  });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(a), {
    requestInit: { headers: { Authorization: `Bearer ${b}` } },
  });
} else {
  fail("usage: client.mjs stdio BINARY DATA_DIR | http URL TOKEN");
}

const client = new Client({ name: "imprint-e2e", version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: root, name: "tea-shop" }] }));
await client.connect(transport);

const out = { server: client.getServerVersion(), mode };
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();

// Before anything is remembered: the standing instructions are none, and
// the resource must still be a text the SDK accepts.
const instructions = await client.readResource({ uri: "imprint://instructions" });
out.instructions_text = instructions.contents[0].text;

const fact = "Ana's favourite tea is jasmine green tea.";
const remembered = await call(client, "remember", { text: fact, type: "persona" });
out.remember_action = remembered.action;
out.memory = remembered.memory;
const id = remembered.memory.id;

const found = await call(client, "search", { query: "favourite tea jasmine", kind: "memory" });
out.search_ids = found.hits.map((h) => h.id);

const recalled = await call(client, "recall", { query: "Which tea should I make for Ana?" });
out.recall_context = recalled.context;

const resource = await client.readResource({ uri: `imprint://memory/${encodeURIComponent(id)}` });
out.resource_text = resource.contents[0].text;

const forgotten = await call(client, "forget", { id });
out.forget_action = forgotten.action;

const after = await call(client, "search", { query: "favourite tea jasmine", kind: "memory" });
out.search_ids_after_forget = after.hits.map((h) => h.id);
const recalledAfter = await call(client, "recall", { query: "Which tea should I make for Ana?" });
out.recall_context_after_forget = recalledAfter.context;
out.shown_after_forget = await call(client, "get_memory", { id });

out.recorded = await call(client, "record_messages", {
  session_id: "e2e-chat",
  messages: [
    { id: "e2e-1", role: "user", content: "I am allergic to peanuts, please remember that." },
    { id: "e2e-2", role: "assistant", content: "Noted: no peanuts in anything I suggest." },
  ],
});
out.ended = await call(client, "end_session", { session_id: "e2e-chat" });

const bad = await client.callTool({ name: "search", arguments: { query: "tea", kind: "everything" } });
out.bad_argument = { is_error: bad.isError === true, text: bad.content.map((c) => c.text).join("") };

await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
