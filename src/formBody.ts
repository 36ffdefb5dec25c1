import type { NextFunction, Request, Response } from 'express';
import qs from 'qs';
import { ClientGoneError, endForGoneClient, readLimited } from './readLimited.js';
import { CONTENT_ENCODING_IN, CONTENT_LENGTH_IN, CONTENT_TYPE_IN, TRANSFER_ENCODING_IN } from './http/headers.js';

const LIMIT = 16 * 1024;
const PARAMETER_LIMIT = 50;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

/** A body the form reader refuses: the routers' error handlers answer it (4xx, never a 500). */
const refusal = (status: number, message: string, type: string) =>
  Object.assign(new Error(message), { status, expose: true, type });

/**
 * The form parser of the pages and the OAuth endpoints, mounted only on their own routes: small bodies (16 KB),
 * at most 50 fields, flat keys (depth 0, as `express.urlencoded({ extended: false })`: a repeated field becomes
 * an array, which the handlers refuse), UTF-8 or ISO-8859-1. It reads through `readLimited`, as REST and MCP
 * do, so the request's body deadline and its client's limit of bodies in flight hold here too: a body too slow
 * is an error with status 408, one too many 429 (the connection is closed after either answer), and a client
 * gone mid-body ends the request quietly. Only `application/x-www-form-urlencoded` is read; other bodies are
 * left for the handler to refuse.
 */
export const formBody =
  () =>
  (req: Request, res: Response, next: NextFunction): void => {
    readForm(req).then(
      (body) => {
        if (body !== undefined) req.body = body;
        next();
      },
      (err: unknown) => (err instanceof ClientGoneError ? endForGoneClient(res) : next(err)),
    );
  };

async function readForm(req: Request): Promise<Record<string, unknown> | undefined> {
  const declared = req.headers[CONTENT_LENGTH_IN];
  if (req.headers[TRANSFER_ENCODING_IN] === undefined && (declared === undefined || declared === '0')) return undefined;
  if (!req.is('application/x-www-form-urlencoded')) return undefined;
  const charset = (CHARSET.exec(req.headers[CONTENT_TYPE_IN] ?? '')?.[1] ?? 'utf-8').toLowerCase();
  if (charset !== 'utf-8' && charset !== 'iso-8859-1')
    throw refusal(415, `unsupported charset "${charset.toUpperCase()}"`, 'charset.unsupported');
  const encoding = (req.headers[CONTENT_ENCODING_IN] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') throw refusal(415, 'content encoding unsupported', 'encoding.unsupported');
  if (Number(declared) > LIMIT) {
    req.resume();
    throw refusal(413, 'request entity too large', 'entity.too.large');
  }
  const { bytes, over } = await readLimited(req, LIMIT);
  if (over) throw refusal(413, 'request entity too large', 'entity.too.large');
  const text = bytes.toString(charset === 'utf-8' ? 'utf8' : 'latin1');
  if (!text.length) return {};
  const count = text.split('&').length;
  if (count > PARAMETER_LIMIT) throw refusal(413, 'too many parameters', 'parameters.too.many');
  try {
    return qs.parse(text, {
      allowPrototypes: true,
      arrayLimit: count,
      depth: 0,
      charset: charset as 'utf-8' | 'iso-8859-1',
      parameterLimit: PARAMETER_LIMIT,
      strictDepth: true,
    }) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof RangeError) throw refusal(400, 'The input exceeded the depth', 'querystring.parse.rangeError');
    throw err;
  }
}
