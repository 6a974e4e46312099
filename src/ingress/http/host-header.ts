/**
 * RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without Host, and to any request
 * with more than one Host field line or with a Host whose value is invalid. Two Hosts are how a
 * request is made to mean one host to a proxy and another to the server behind it.
 */
import type { IncomingMessage } from 'node:http';

/**
 * The octets RFC 9110 §7.2 allows in Host = uri-host [ ":" port ], uri-host from RFC 3986 §3.2.2:
 * reg-name (unreserved and sub-delims here; pct-encoded checked apart) or an IP-literal in
 * brackets, whose inside is checked for the same and ':' (a superset of IPv6address and
 * IPvFuture: the point is to refuse what no host holds, such as space, '/', '@' or '#', not to
 * parse IPv6).
 */
const HOST_OCTET = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&\'()*+,;=') HOST_OCTET[c.charCodeAt(0)] = 1;

const COLON = 0x3a;
const PERCENT = 0x25;
const OPEN = 0x5b;
const CLOSE = 0x5d;

/** Why the request's Host breaks RFC 9112 §3.2, for the 400's message (never its value); undefined: it does not. */
export function hostHeaderProblem(req: IncomingMessage): string | undefined {
  // Node keeps the first Host of several in req.headers: only rawHeaders has them all.
  const raw = req.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  if (hosts > 1) return `a request carries one Host header; this one has ${hosts} (RFC 9112 §3.2)`;
  const host = req.headers.host;
  if (host === undefined) {
    return req.httpVersionMajor === 1 && req.httpVersionMinor === 1 ? 'an HTTP/1.1 request needs a Host header' : undefined;
  }
  return isHostValue(host) ? undefined : 'the Host header is not host[:port] (RFC 9112 §3.2)';
}

/** Whether `value` is uri-host [ ":" port ] (RFC 9110 §7.2); empty is valid (a target URI without authority). */
function isHostValue(value: string): boolean {
  const n = value.length;
  let i: number;
  if (n > 0 && value.charCodeAt(0) === OPEN) {
    i = hostOctetsEnd(value, 1, CLOSE);
    if (i <= 1 || i === n) return false; // an octet no host holds, '[]', or no ']'
    i++;
  } else {
    i = hostOctetsEnd(value, 0, COLON);
    if (i < 0) return false;
  }
  if (i === n) return true;
  if (value.charCodeAt(i) !== COLON) return false;
  // RFC 3986 §3.2.3: port = *DIGIT.
  for (i++; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/**
 * Where the host octets of `value` from `from` end: at the first `stop`, or at the end; -1 at an
 * octet no host holds. Inside brackets (`stop` is ']') ':' is a host octet too.
 */
function hostOctetsEnd(value: string, from: number, stop: number): number {
  let i = from;
  for (; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === stop) return i;
    if (c === PERCENT) {
      // pct-encoded = "%" HEXDIG HEXDIG
      if (!isHexDigit(value.charCodeAt(i + 1)) || !isHexDigit(value.charCodeAt(i + 2))) return -1;
      i += 2;
    } else if (c >= 128 || (HOST_OCTET[c] === 0 && !(c === COLON && stop === CLOSE))) {
      return -1;
    }
  }
  return i;
}

function isHexDigit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
}
