/**
 * The in-container half of a run's way out (docs/security.md#egress), part of the entry script: when
 * the job names the gateway's socket, a listener on the container's own loopback (the container has no
 * other interface: `--network none`) relays every connection to that unix socket in `/sandbox`, and
 * HTTP_PROXY / HTTPS_PROXY point the skill's HTTP clients at it. The engine's gateway on the other end
 * decides what may pass; this relay only moves bytes. Its threads are daemons, so a finished skill
 * never waits for them.
 */
export const EGRESS_FORWARDER_SCRIPT = `
def _start_egress(sock_path):
    import socket, threading
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    def pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass
    def serve():
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                upstream.connect(sock_path)
            except OSError:
                client.close()
                upstream.close()
                continue
            threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
    threading.Thread(target=serve, daemon=True).start()
    proxy = "http://127.0.0.1:%d" % listener.getsockname()[1]
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        os.environ[name] = proxy
`;
