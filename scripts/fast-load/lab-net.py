# Server and client of scripts/fast-load-lab.mjs.
#   lab-net.py serve PORT            answers each connection with "LOCAL_ADDR REMOTE_ADDR"
#   lab-net.py connect SRC DST PORT N  N connections from SRC, one JSON line of the answers
import json
import socket
import sys


def serve(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(512)
    print("ready", flush=True)
    while True:
        c, peer = s.accept()
        try:
            c.sendall(("%s %s\n" % (c.getsockname()[0], peer[0])).encode())
        finally:
            c.close()


def connect(src, dst, port, n):
    out = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(1.0)
        try:
            s.bind((src, 0))
            s.connect((dst, port))
            out.append(s.recv(200).decode().strip())
        except socket.timeout:
            out.append("TIMEOUT")
        except OSError as e:
            out.append("ERR %s" % e.errno)
        finally:
            s.close()
    print(json.dumps(out))


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]))
    else:
        connect(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
