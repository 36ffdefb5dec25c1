// Prints svc's server.json for the official MCP registry (mcp/discovery.ts writes it, from the same catalog as the
// server card). Without options: the repository's server.json, a template any deployment's address fills in.
// `--name` a name under a namespace you own and `--url` your deployment's BASE_URL: an entry of your own.
//   npx tsx scripts/server-json.ts > server.json
//   npx tsx scripts/server-json.ts --name com.example/svc --url https://svc.example.com > server.json
import { parseArgs } from 'node:util';
import { registryServerJson } from '../mcp/discovery.js';

const { values } = parseArgs({ options: { name: { type: 'string' }, url: { type: 'string' } } });
if (values.name !== undefined && !/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/.test(values.name)) {
  console.error(`--name ${values.name}: the registry wants <reverse-DNS namespace>/<name>, e.g. com.example/svc`);
  process.exit(2);
}
if (values.url !== undefined && !/^https:\/\/[^/]+/.test(values.url)) {
  console.error(`--url ${values.url}: the registry wants the deployment's https:// address (its BASE_URL)`);
  process.exit(2);
}
process.stdout.write(`${JSON.stringify(registryServerJson({ name: values.name, baseUrl: values.url }), null, 2)}\n`);
