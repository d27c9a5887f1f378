/**
 * The one way the service opens a TCP socket (`cloudflare:sockets`): SMTP sends, the egress proxy's tunnel, the
 * proxy's readiness probe. A socket's `opened` and `closed` promises reject when the connection fails (a name that does
 * not resolve, a refused port), whether or not anyone awaits them: an unheard one is an unhandled rejection. The
 * callers learn of a failure from the reads and writes they await, so these two are heard here and left at that.
 */

/** `socket`, with its `opened` and `closed` rejections heard (they surface again through reads and writes). */
export function heard(socket: Socket): Socket {
  socket.opened.catch(() => undefined);
  socket.closed.catch(() => undefined);
  return socket;
}

/** Opens a socket to `address` (see the module's comment). */
export async function openSocket(address: SocketAddress, options?: SocketOptions): Promise<Socket> {
  // Imported here, not at the top: the module exists only in workerd, and the OpenAPI tooling loads these in Node.
  const { connect } = await import("cloudflare:sockets");
  return heard(connect(address, options));
}
