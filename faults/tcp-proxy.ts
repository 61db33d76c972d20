import net from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A TCP proxy on loopback between the workers and the web process, which can
 * cut the line: drop every open connection and refuse new ones until it is
 * mended — what a flapping load balancer or a network partition does to a
 * worker's long-polls and reports.
 */
export interface TcpProxy {
  port: number;
  /** Destroys every open connection and resets each new one until mend(). */
  cut(): void;
  mend(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let broken = false;
  const server = net.createServer((client) => {
    if (broken) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on("close", () => open.delete(socket));
      socket.on("error", () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      broken = true;
      for (const socket of open) socket.resetAndDestroy();
    },
    mend() {
      broken = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
