// `npm run client:generate`: regenerates clients/typescript/src/schema.ts from the document the server serves
// (built in-process from the procedures, exactly as GET /v1/openapi.json sends it).
import fs from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '../../../rest/openapi.js';
import { generateTypes } from './generateTypes.js';

const target = path.join(import.meta.dirname, '../src/schema.ts');
const document = JSON.parse(JSON.stringify(buildOpenApiDocument('http://localhost:3000')));
fs.writeFileSync(target, await generateTypes(document));
console.log(`wrote ${path.relative(process.cwd(), target)}`);
