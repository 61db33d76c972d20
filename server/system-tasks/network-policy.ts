import { BlockList, isIP } from "node:net";

/**
 * Which addresses an HTTP task or a webhook may reach. A workflow author can
 * put any URL in an HTTP node, and the request leaves from inside the
 * deployment: without this, `http://169.254.169.254/latest/meta-data/` reads
 * the cloud instance's credentials and `http://10.0.0.5:5432` probes the
 * database network. Refused unless the operator sets
 * NODE_FLOW_HTTP_ALLOW_PRIVATE (config.httpAllowPrivateNetworks).
 *
 * The check runs on the address a connection is actually made to (see
 * guarded-http.ts), never on the hostname: a name that resolves to a public
 * address when checked and to 127.0.0.1 when connected (DNS rebinding) must
 * not get through.
 */

interface Range {
  network: string;
  prefix: number;
  family: "ipv4" | "ipv6";
  why: string;
}

const RANGES: readonly Range[] = [
  { network: "0.0.0.0", prefix: 8, family: "ipv4", why: "'this network' (0.0.0.0/8)" },
  { network: "10.0.0.0", prefix: 8, family: "ipv4", why: "private (10.0.0.0/8)" },
  { network: "100.64.0.0", prefix: 10, family: "ipv4", why: "carrier-grade NAT (100.64.0.0/10)" },
  { network: "127.0.0.0", prefix: 8, family: "ipv4", why: "loopback (127.0.0.0/8)" },
  // Includes 169.254.169.254, the cloud metadata endpoint.
  { network: "169.254.0.0", prefix: 16, family: "ipv4", why: "link-local (169.254.0.0/16, cloud metadata)" },
  { network: "172.16.0.0", prefix: 12, family: "ipv4", why: "private (172.16.0.0/12)" },
  { network: "192.0.0.0", prefix: 24, family: "ipv4", why: "IETF protocol assignments (192.0.0.0/24)" },
  { network: "192.0.2.0", prefix: 24, family: "ipv4", why: "documentation (192.0.2.0/24)" },
  { network: "192.168.0.0", prefix: 16, family: "ipv4", why: "private (192.168.0.0/16)" },
  { network: "198.18.0.0", prefix: 15, family: "ipv4", why: "benchmarking (198.18.0.0/15)" },
  { network: "198.51.100.0", prefix: 24, family: "ipv4", why: "documentation (198.51.100.0/24)" },
  { network: "203.0.113.0", prefix: 24, family: "ipv4", why: "documentation (203.0.113.0/24)" },
  { network: "224.0.0.0", prefix: 4, family: "ipv4", why: "multicast (224.0.0.0/4)" },
  { network: "240.0.0.0", prefix: 4, family: "ipv4", why: "reserved (240.0.0.0/4)" },
  // ::/96 holds :: and ::1 and the deprecated IPv4-compatible form; nothing public lives there.
  { network: "::", prefix: 96, family: "ipv6", why: "unspecified, loopback or IPv4-compatible (::/96)" },
  { network: "100::", prefix: 64, family: "ipv6", why: "discard (100::/64)" },
  { network: "2001:db8::", prefix: 32, family: "ipv6", why: "documentation (2001:db8::/32)" },
  { network: "fc00::", prefix: 7, family: "ipv6", why: "unique local (fc00::/7)" },
  { network: "fe80::", prefix: 10, family: "ipv6", why: "link-local (fe80::/10)" },
  { network: "fec0::", prefix: 10, family: "ipv6", why: "site-local (fec0::/10)" },
  { network: "ff00::", prefix: 8, family: "ipv6", why: "multicast (ff00::/8)" },
];

// One BlockList per range, so a hit can say which range it was. BlockList
// matches an IPv4-mapped IPv6 address (::ffff:127.0.0.1) against IPv4 rules
// itself (checked on Node 20).
const LISTS = RANGES.map((range) => {
  const list = new BlockList();
  list.addSubnet(range.network, range.prefix, range.family);
  return { list, range };
});

/**
 * Why `address` (an IP literal, v4 or v6, without brackets) must not be
 * reached, or undefined when it is a public address. Not an IP at all is
 * refused too: the caller should have resolved it.
 */
export function blockedAddressReason(address: string): string | undefined {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  // A zone id (fe80::1%eth0) only ever qualifies a link-local address.
  const unzoned = bare.includes("%") ? bare.slice(0, bare.indexOf("%")) : bare;
  const version = isIP(unzoned);
  if (version === 0) return "not an IP address";
  const family = version === 4 ? "ipv4" : "ipv6";
  for (const { list, range } of LISTS) {
    if (list.check(unzoned, family)) return range.why;
  }
  if (version === 6) {
    // Translation prefixes carry an IPv4 address that a gateway then connects
    // to: 64:ff9b::10.0.0.1 (NAT64) or 2002:0a00:0001:: (6to4) reach 10.0.0.1.
    const embedded = embeddedIpv4(unzoned);
    if (embedded !== undefined) {
      const inner = blockedAddressReason(embedded);
      if (inner !== undefined) return `${inner}, embedded in ${unzoned}`;
    }
  }
  return undefined;
}

/** The IPv4 address inside a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address. */
function embeddedIpv4(address: string): string | undefined {
  const groups = expandIpv6(address);
  if (!groups) return undefined;
  const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)) return quad(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return quad(groups[1]!, groups[2]!);
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail included). */
function expandIpv6(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split(".").map(Number);
    text = `${text.slice(0, dotted.index)}${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - headGroups.length - tailGroups.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  const groups = [...headGroups, ...Array<string>(missing).fill("0"), ...tailGroups].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}
