import { format } from 'content-type';

/**
 * Media types of uploaded files (RFC 9110 §8.3.1), strict: a stored content type is sent back verbatim as a
 * response header, so it must be something Node's `validateHeaderValue` accepts and a receiver parses the
 * same way we do.
 *
 *   media-type = type "/" subtype parameters
 *   parameters = *( OWS ";" OWS [ parameter ] )
 *   parameter  = token "=" ( token / quoted-string )
 *
 * No control character (CR, LF, NUL, TAB…) anywhere; octets above 0x7e only as obs-text (Latin-1) inside a
 * quoted string. The grammar is checked here, parameter by parameter; `content-type` (jshttp) re-formats the
 * result normalized (type and parameter names lower-cased, `; name=value`, values quoted only when they must be).
 */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED = '"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\x20-\\x7e\\x80-\\xff])*"';
const TYPE = new RegExp(`^${TOKEN}/${TOKEN}`, 'y');
/** One `OWS ";" OWS [ parameter ]` (OWS: spaces only), matched where the previous one ended. */
const PARAMETER = new RegExp(` *; *(?:(${TOKEN})=(${TOKEN}|${QUOTED}))?`, 'y');
const TRAILING_SPACE = / *$/y;

/** Longest media type accepted (the upload schema's limit too). */
export const MAX_MEDIA_TYPE = 255;

/** The media type normalized, or null when `raw` is not a strict media type (a parameter given twice included). */
export function normalizeMediaType(raw: string): string | null {
  if (raw.length > MAX_MEDIA_TYPE) return null;
  TYPE.lastIndex = 0;
  const type = TYPE.exec(raw);
  if (!type) return null;
  const parameters: Record<string, string> = {};
  let at = TYPE.lastIndex;
  for (;;) {
    PARAMETER.lastIndex = at;
    const p = PARAMETER.exec(raw);
    if (!p) break;
    at = PARAMETER.lastIndex;
    if (p[1] === undefined) continue;
    const name = p[1].toLowerCase();
    // a parameter given twice is ambiguous (receivers disagree on which wins): refused, not silently dropped
    if (Object.hasOwn(parameters, name)) return null;
    parameters[name] = p[2].startsWith('"') ? p[2].slice(1, -1).replace(/\\(.)/g, '$1') : p[2];
  }
  TRAILING_SPACE.lastIndex = at;
  if (!TRAILING_SPACE.test(raw) || TRAILING_SPACE.lastIndex !== raw.length) return null;
  try {
    return format({ type: type[0].toLowerCase(), parameters });
  } catch {
    return null;
  }
}

export const isMediaType = (raw: string): boolean => normalizeMediaType(raw) !== null;

/**
 * The Content-Type to serve a stored file with: what was stored when it is (still) a strict media type,
 * else `application/octet-stream`, so no stored value (rows older than this check) can break a download.
 */
export const servableMediaType = (stored: string): string => normalizeMediaType(stored) ?? 'application/octet-stream';
