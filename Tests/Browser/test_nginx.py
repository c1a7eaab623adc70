"""nginx (Debian's) as a caching reverse proxy in front of two `filmstrip serve` replicas, with the configuration
shipped in `Extras/nginx/filmstrip-images.conf`: a repeated image URL comes from nginx's cache, a burst for a new one
costs one decode in all, and a replica killed costs no failed request.

Run: FILMSTRIP_BIN=.build/debug/filmstrip python3 -m unittest discover -s Tests/Browser -p test_nginx.py -v
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from test_image_api import QUADRANTS, make  # noqa: E402
from test_serve import ROOT, Server  # noqa: E402

CONFIG = os.path.join(ROOT, "Extras", "nginx", "filmstrip-images.conf")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipUnless(shutil.which("nginx") or os.path.exists("/usr/sbin/nginx"), "nginx is not installed")
class CachingProxy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="filmstrip-nginx-")
        os.chmod(cls.work, 0o755)
        library = os.path.join(cls.work, "library")
        os.makedirs(library)
        make(os.path.join(library, "quad.mp4"), QUADRANTS, 4)
        cls.replicas = [Server([library], os.path.join(cls.work, f"cache-{n}")) for n in (1, 2)]
        temp = os.path.join(cls.work, "nginx")
        cache = os.path.join(cls.work, "proxy-cache")
        for folder in (temp, cache):
            os.makedirs(folder)
            os.chmod(folder, 0o777)
        cls.port = free_port()
        with open(CONFIG) as f:
            text = f.read()
        for name, value in (("@CACHE", cache), ("@TEMP", temp), ("@LISTEN", f"127.0.0.1:{cls.port}"),
                            ("@REPLICA1", f"127.0.0.1:{cls.replicas[0].port}"),
                            ("@REPLICA2", f"127.0.0.1:{cls.replicas[1].port}")):
            text = text.replace(name, value)
        if os.geteuid() == 0:
            text = "user root;\n" + text
        config = os.path.join(temp, "nginx.conf")
        with open(config, "w") as f:
            f.write(text)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        cls.nginx = subprocess.Popen([nginx, "-c", config, "-p", temp, "-e", os.path.join(temp, "error.log"),
                                      "-g", "daemon off;"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", cls.port), timeout=1).close()
                break
            except OSError:
                if cls.nginx.poll() is not None:
                    raise RuntimeError("nginx exited: " + cls.nginx.stdout.read().decode())
                time.sleep(0.1)

    @classmethod
    def tearDownClass(cls):
        cls.nginx.terminate()
        cls.nginx.wait(timeout=20)
        for replica in cls.replicas:
            if replica.process.poll() is None:
                replica.stop()
        shutil.rmtree(cls.work, ignore_errors=True)

    def get(self, target):
        """(status, headers, body) of a GET through nginx."""
        proxy = Server.__new__(Server)
        proxy.host, proxy.port = "127.0.0.1", self.port
        return Server.raw(proxy, target)

    def rendered(self):
        return sum(r.get_json("/api/status")["images"]["rendered"] for r in self.replicas if r.process.poll() is None)

    def test_1_a_repeat_comes_from_the_cache(self):
        target = "/quad.mp4/thumbnail.jpg?time=1.2&width=160"
        first = self.get(target)
        self.assertEqual((first[0], first[1].get("x-cache-status")), (200, "MISS"), first[2][:200])
        before = self.rendered()
        again = self.get(target)
        self.assertEqual((again[0], again[1].get("x-cache-status"), again[2]), (200, "HIT", first[2]))
        self.assertEqual(self.rendered(), before, "the repeat reached a replica")

    def test_2_a_burst_for_a_new_image_costs_one_decode(self):
        before = self.rendered()
        target = "/quad.mp4/thumbnail.png?time=2.64&width=200&height=200&fit_mode=crop"
        results = []
        threads = [threading.Thread(target=lambda: results.append(self.get(target))) for _ in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual([r[0] for r in results], [200] * 10)
        self.assertEqual(len({r[2] for r in results}), 1)
        self.assertEqual(self.rendered(), before + 1)

    def test_3_a_killed_replica_costs_no_failed_request(self):
        # Both replicas answer while both are up (round robin).
        for k in range(6):
            self.assertEqual(self.get(f"/quad.mp4/thumbnail.jpg?time=0.{k + 1}&width=96")[0], 200)
        counts = [r.get_json("/api/status")["images"]["rendered"] for r in self.replicas]
        self.assertTrue(all(c > 0 for c in counts), counts)
        self.replicas[0].process.kill()
        self.replicas[0].process.wait()
        statuses = [self.get(f"/quad.mp4/thumbnail.jpg?time=3.{k}&width=88")[0] for k in range(10)]
        self.assertEqual(statuses, [200] * 10)


if __name__ == "__main__":
    unittest.main()
