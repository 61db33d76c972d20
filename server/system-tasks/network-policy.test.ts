import { describe, expect, it } from "vitest";
import { blockedAddressReason } from "./network-policy";

describe("blockedAddressReason", () => {
  it.each([
    ["127.0.0.1", /loopback/],
    ["127.255.0.9", /loopback/],
    ["10.1.2.3", /private \(10/],
    ["172.16.0.1", /private \(172/],
    ["172.31.255.255", /private \(172/],
    ["192.168.1.1", /private \(192\.168/],
    ["100.64.0.1", /carrier-grade NAT/],
    ["169.254.169.254", /link-local.*metadata/],
    ["0.0.0.0", /this network/],
    ["224.0.0.1", /multicast/],
    ["255.255.255.255", /reserved/],
    ["::1", /loopback/],
    ["[::1]", /loopback/],
    ["::", /unspecified/],
    ["fd12:3456::1", /unique local/],
    ["fc00::1", /unique local/],
    ["fe80::1", /link-local/],
    ["fe80::1%eth0", /link-local/],
    ["ff02::1", /multicast/],
    // IPv4-mapped, NAT64 and 6to4 forms of internal IPv4 addresses.
    ["::ffff:127.0.0.1", /loopback/],
    ["::ffff:a9fe:a9fe", /link-local/],
    ["64:ff9b::10.0.0.1", /private \(10.*embedded/],
    ["64:ff9b::a00:1", /private \(10.*embedded/],
    ["2002:a9fe:a9fe::1", /link-local.*embedded/],
    ["localhost", /not an IP/],
  ])("refuses %s", (address, why) => {
    expect(blockedAddressReason(address)).toMatch(why);
  });

  it.each(["93.184.215.14", "8.8.8.8", "172.32.0.1", "100.128.0.1", "169.255.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"])(
    "allows the public address %s",
    (address) => {
      expect(blockedAddressReason(address)).toBeUndefined();
    },
  );
});
