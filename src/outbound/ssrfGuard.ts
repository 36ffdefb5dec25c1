// Outbound requests to URLs that users supply (webhooks, agent connectors, OAuth client metadata documents):
// the SSRF check and the operator's allow-list (docs/security-model.md#outbound-calls), and the lookup that
// pins a connection to the checked address.
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';
import type { Config } from '../config.js';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address (injectable: tests resolve names without DNS). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The operating system's resolver (getaddrinfo, so /etc/hosts counts too). */
export const systemResolver: Resolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

/** Parsed `SVC_SSRF_ALLOWLIST`: CIDRs (or single addresses) and host names (`*.corp.example` too). */
export interface Allowlist {
  cidrs: [ipaddr.IPv4 | ipaddr.IPv6, number][];
  hosts: string[];
}

const allowlists = new WeakMap<Config, Allowlist>();

/** What the development setup adds to the operator's list (Config.loopbackOutbound): this machine, nothing else. */
export const LOOPBACK_ALLOWLIST = ['127.0.0.0/8', '::1/128', 'localhost'];

/**
 * The operator allow-list (`SVC_SSRF_ALLOWLIST`), parsed once per configuration, with the loopback addresses in the
 * development setup.
 */
export function allowlistOf(config: Config): Allowlist {
  let list = allowlists.get(config);
  if (!list) {
    list = parseAllowlist(
      config.loopbackOutbound ? [...config.ssrfAllowlist, ...LOOPBACK_ALLOWLIST] : config.ssrfAllowlist,
    );
    allowlists.set(config, list);
  }
  return list;
}

export function parseAllowlist(entries: string[]): Allowlist {
  const out: Allowlist = { cidrs: [], hosts: [] };
  for (const raw of entries) {
    const e = raw
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, '');
    if (!e) continue;
    if (e.includes('/')) {
      try {
        out.cidrs.push(ipaddr.parseCIDR(e));
      } catch {
        throw new Error(`SVC_SSRF_ALLOWLIST: ${raw} is not a CIDR`);
      }
    } else if (ipaddr.isValid(e)) {
      const a = ipaddr.parse(e);
      out.cidrs.push([a, a.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/.test(e)) {
      out.hosts.push(e.replace(/\.$/, ''));
    } else {
      throw new Error(`SVC_SSRF_ALLOWLIST: ${raw} is neither a CIDR nor a host name`);
    }
  }
  return out;
}

/** Why a URL was refused; `details` are safe to show to the one registering it. */
export class UrlRefusedError extends Error {
  constructor(
    readonly reason:
      'invalid_url' | 'scheme_not_allowed' | 'credentials_in_url' | 'blocked_host' | 'blocked_address' | 'unresolvable',
    message: string,
    readonly address?: string,
  ) {
    super(message);
    this.name = 'UrlRefusedError';
  }
}

/** What the sender connects to: the URL, and the one address that was checked. */
export interface CheckedTarget {
  url: URL;
  hostname: string;
  address: string;
  family: 4 | 6;
}

export interface SsrfPolicy {
  allowlist: Allowlist;
  resolver: Resolver;
  resolveTimeoutMs?: number;
}

const LOCAL_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/** The IPv4 address an IPv6 address stands for (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`). */
function embeddedIPv4(a: ipaddr.IPv6): ipaddr.IPv4 | null {
  if (a.isIPv4MappedAddress()) return a.toIPv4Address();
  if (a.match(NAT64_WELL_KNOWN)) {
    const b = a.toByteArray();
    return new ipaddr.IPv4(b.slice(12));
  }
  return null;
}

const inAllowlist = (a: ipaddr.IPv4 | ipaddr.IPv6, list: Allowlist) =>
  list.cidrs.some(([net, bits]) => net.kind() === a.kind() && a.match([net, bits] as never));

/**
 * Is this address internal or special? Every IPv4 range but ordinary unicast is refused
 * (unspecified, loopback, private, link-local, CGNAT, multicast, broadcast, reserved and documentation
 * ranges); IPv6 must be global unicast (2000::/3, not Teredo/6to4/documentation/benchmarking), and an
 * IPv6 form of an IPv4 address (IPv4-mapped, NAT64) is judged by that IPv4 address. An allow-list CIDR
 * wins over all of that.
 */
export function isBlockedAddress(address: string, allowlist: Allowlist): boolean {
  let a: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    a = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return true;
  }
  if (inAllowlist(a, allowlist)) return false;
  if (a.kind() === 'ipv6') {
    const v4 = embeddedIPv4(a as ipaddr.IPv6);
    if (v4) return isBlockedAddress(v4.toString(), allowlist);
    return !(a as ipaddr.IPv6).match(GLOBAL_UNICAST_V6) || a.range() !== 'unicast';
  }
  return a.range() !== 'unicast';
}

function parseUrl(raw: string): { url: URL; hostname: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefusedError('invalid_url', 'URL is not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UrlRefusedError('scheme_not_allowed', 'URL must use http or https');
  if (url.username || url.password)
    throw new UrlRefusedError('credentials_in_url', 'URL must not carry credentials; use a custom header');
  // WHATWG parsing has already turned 2130706433, 0177.0.0.1, 0x7f000001 and 127.1 into 127.0.0.1
  const hostname = url.hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (!hostname) throw new UrlRefusedError('invalid_url', 'URL has no host');
  return { url, hostname };
}

/**
 * The refusal of an internal address. The message names no address: for a host name, the address it
 * resolved to is what an attacker probing an internal network wants to learn; `address` stays on the
 * error for the server's own log, never for the client.
 */
const blocked = (address: string, hostname?: string) =>
  new UrlRefusedError(
    'blocked_address',
    `${hostname ? `Host ${hostname} resolves to` : 'URL points to'} an internal or special address; an operator may allow it with SVC_SSRF_ALLOWLIST`,
    address,
  );

async function resolveWithin(p: SsrfPolicy, hostname: string): Promise<ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('resolution timed out')), p.resolveTimeoutMs ?? 5000);
  });
  try {
    return await Promise.race([p.resolver(hostname), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Checks a URL the server is asked to call (a webhook, an agent connector, an OAuth client's metadata
 * document) and picks the address to connect to: only http/https; a literal address
 * in any spelling must not be internal; `localhost` names are refused; a name is resolved and refused when
 * ANY of its addresses is internal. The caller connects to `address` and nothing else, so a second DNS
 * answer cannot swap in an internal address. Allow-listed names skip the address check. Throws
 * UrlRefusedError. With `allowUnresolvable`, a name that does not resolve passes (creation: DNS may come later).
 */
export async function checkOutboundUrl(
  raw: string,
  p: SsrfPolicy,
  o: { allowUnresolvable?: boolean } = {},
): Promise<CheckedTarget | null> {
  const { url, hostname } = parseUrl(raw);
  if (ipaddr.isValid(hostname)) {
    if (isBlockedAddress(hostname, p.allowlist)) throw blocked(hostname);
    return { url, hostname, address: hostname, family: ipaddr.parse(hostname).kind() === 'ipv6' ? 6 : 4 };
  }
  const allowedName = p.allowlist.hosts.some(
    (h) => h === hostname || (h.startsWith('*.') && hostname.endsWith(h.slice(1))),
  );
  if (!allowedName && (LOCAL_NAMES.has(hostname) || hostname.endsWith('.localhost'))) {
    throw new UrlRefusedError('blocked_host', `URL points to a local host name (${hostname})`);
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolveWithin(p, hostname);
  } catch {
    addresses = [];
  }
  if (!addresses.length) {
    if (o.allowUnresolvable) return null;
    throw new UrlRefusedError('unresolvable', `Host ${hostname} could not be resolved`);
  }
  if (!allowedName) {
    const bad = addresses.find((a) => isBlockedAddress(a.address, p.allowlist));
    if (bad) throw blocked(bad.address, hostname);
  }
  return { url, hostname, address: addresses[0].address, family: addresses[0].family };
}

/** The pinned lookup: the socket's DNS question is answered with the checked address, and only with it. */
export function pinnedLookup(target: CheckedTarget) {
  return (_host: string, opts: LookupOptions, cb: (...a: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: target.address, family: target.family } satisfies LookupAddress]);
    else cb(null, target.address, target.family);
  };
}
