// A real MCP client (the official TypeScript SDK) driven line by line:
// cli/tests/mcp_proxy.rs writes one JSON command per line on stdin and
// reads one JSON answer per line on stdout.
//
//   node driver.mjs '{"command": "...", "args": [...]}'   (stdio transport)
//   node driver.mjs '{"url": "http://127.0.0.1:PORT/mcp"}'  (streamable HTTP)
//
// "clientName" in either sets the clientInfo.name it sends at initialize.
//
// Commands: {"op": "list_tools"} | {"op": "call", "name", "args", "task"?}
// | {"op": "list_resources"} | {"op": "read", "uri"} | {"op": "get_prompt", "name", "args"?}
// | {"op": "stats"}
// | {"op": "close"}. Answers: {"ok": result} or {"error": message, "code"}.
// The client answers the server's sampling, elicitation and roots requests
// itself and counts them, with the progress and log notifications it got.
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const target = JSON.parse(process.argv[2]);
const stats = { sampled: 0, elicited: 0, roots: 0, progress: 0, logs: 0 };

const client = new Client(
  { name: target.clientName ?? 'result-sanitizer-test', version: '1.0.0' },
  { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } },
);
client.setRequestHandler(CreateMessageRequestSchema, async () => {
  stats.sampled++;
  return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'a sampled reply' } };
});
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  stats.elicited++;
  if (req.params.mode === 'url') return { action: 'accept' };
  const content = {};
  for (const [k, p] of Object.entries(req.params.requestedSchema?.properties ?? {})) {
    content[k] = fill(p);
  }
  return { action: 'accept', content };
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  stats.roots++;
  return { roots: [{ uri: 'file:///tmp', name: 'tmp' }] };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, () => {
  stats.logs++;
});

// A value that satisfies one property of an elicitation's schema.
function fill(p) {
  if (p.enum) return p.enum[0];
  if (p.oneOf) return p.oneOf[0].const;
  switch (p.type) {
    case 'boolean':
      return true;
    case 'number':
    case 'integer':
      return p.minimum ?? 1;
    case 'array':
      return p.items?.enum ? [p.items.enum[0]] : p.items?.anyOf ? [p.items.anyOf[0].const] : [];
    default:
      if (p.format === 'email') return 'someone@example.com';
      if (p.format === 'uri') return 'https://example.com/';
      if (p.format === 'date') return '2026-01-01';
      if (p.format === 'date-time') return '2026-01-01T00:00:00Z';
      return 'x'.repeat(Math.max(1, p.minLength ?? 1));
  }
}

const transport = target.url
  ? new StreamableHTTPClientTransport(new URL(target.url))
  : new StdioClientTransport({ command: target.command, args: target.args ?? [], stderr: 'inherit' });
await client.connect(transport);

async function handle(cmd) {
  const opts = { timeout: 60000, onprogress: () => stats.progress++ };
  switch (cmd.op) {
    case 'list_tools':
      return client.listTools();
    case 'call':
      if (cmd.task) {
        let last;
        for await (const m of client.experimental.tasks.callToolStream(
          { name: cmd.name, arguments: cmd.args ?? {} },
          undefined,
          opts,
        )) {
          if (m.type === 'error') throw m.error;
          last = m;
        }
        return last.result;
      }
      return client.callTool({ name: cmd.name, arguments: cmd.args ?? {} }, undefined, opts);
    case 'list_resources':
      return client.listResources();
    case 'read':
      return client.readResource({ uri: cmd.uri });
    case 'get_prompt':
      return client.getPrompt({ name: cmd.name, arguments: cmd.args ?? {} });
    case 'stats':
      return stats;
    case 'close':
      await client.close();
      process.exit(0);
  }
  throw new Error(`unknown op ${cmd.op}`);
}

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  let answer;
  try {
    answer = { ok: await handle(JSON.parse(line)) };
  } catch (e) {
    answer = { error: String(e?.message ?? e), code: e?.code ?? null };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
}
await client.close();
