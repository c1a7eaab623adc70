"""`filmstrip catalog generate` as the task of a Slurm job array, on a real one-node Slurm cluster (munged,
slurmctld and slurmd started by Scripts/slurm-cluster.sh in a temporary folder and stopped by their process ids).

The array is docs/catalog/slurm-array.sh, as the guide tells users to submit it: four tasks over a dozen short
videos made with the ffmpeg CLI, one of them broken. One task is cancelled with scancel while it is making an
item; the array is submitted again. Every good item must then be complete, the broken one recorded as failed, and
the outputs byte for byte those of one `filmstrip catalog generate` process.

Run (as root, with slurm-wlm and munge installed by `make deps`):
  FILMSTRIP_BIN=.build/debug/filmstrip python3 -m unittest discover -s Tests/Cluster -v
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import sys
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.abspath(os.environ.get("FILMSTRIP_BIN") or os.path.join(
    subprocess.check_output(["swift", "build", "--show-bin-path"], cwd=ROOT, text=True).strip(), "filmstrip"))
CLUSTER = os.path.join(ROOT, "Scripts", "slurm-cluster.sh")
ARRAY = os.path.join(ROOT, "docs", "catalog", "slurm-array.sh")
# Exact frames five times a second: a task takes seconds, so the cancel lands inside an item.
SETTINGS = ["--interval", "0.2", "--mode", "accurate", "--formats", "vtt,hls,bif", "--jobs", "1"]


def outputs(catalog):
    """Every output file of every item, but the completion markers (they name their host and time), by path."""
    files = {}
    items = os.path.join(catalog, "items")
    for folder, _, names in os.walk(items):
        for name in names:
            if name != "filmstrip-item.json":
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    files[os.path.relpath(path, items)] = f.read()
    return files


@unittest.skipUnless(sys.platform.startswith("linux") and os.geteuid() == 0,
                     "slurmd runs as root on Linux (make test in CI runs as root)")
class SlurmArrayTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="filmstrip-slurm-")
        os.chmod(cls.work, 0o755)
        videos = os.path.join(cls.work, "videos")
        os.makedirs(videos)
        names = []
        for k in range(11):
            name = f"clip-{k:02d}.mp4"
            subprocess.run(
                ["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                 f"testsrc2=s=480x270:r=25:d={6 + k % 4},hue=h={k * 33}", "-c:v", "libx264", "-preset", "veryfast",
                 "-g", "25", "-pix_fmt", "yuv420p", os.path.join(videos, name)], check=True)
            names.append(name)
        with open(os.path.join(videos, "clip-00.mp4"), "rb") as f:
            head = f.read(4000)
        with open(os.path.join(videos, "broken.mp4"), "wb") as f:
            f.write(head)
        names.append("broken.mp4")
        cls.list = os.path.join(cls.work, "videos.txt")
        with open(cls.list, "w") as f:
            f.write("# a dozen videos, one broken\n" + "".join(f"videos/{n}\n" for n in names))
        cls.cluster = os.path.join(cls.work, "cluster")
        started = time.monotonic()
        result = subprocess.run([CLUSTER, "start", cls.cluster], capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"the Slurm cluster did not start:\n{result.stdout}\n{result.stderr}")
        cls.start_seconds = time.monotonic() - started
        cls.env = dict(os.environ, SLURM_CONF=os.path.join(cls.cluster, "slurm.conf"), FILMSTRIP=BIN,
                       PATH=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")

    @classmethod
    def tearDownClass(cls):
        subprocess.run([CLUSTER, "stop", cls.cluster], capture_output=True, text=True)
        # The daemons it started are gone: none still names the cluster's folder on its command line.
        left = subprocess.run(["pgrep", "-f", cls.cluster], capture_output=True, text=True).stdout.split()
        shutil.rmtree(cls.work, ignore_errors=True)
        assert not left, f"daemons left running: {left}"

    def slurm(self, *arguments):
        return subprocess.run(list(arguments), capture_output=True, text=True, env=self.env, check=True).stdout

    def submit(self, catalog):
        out = self.slurm("sbatch", "--parsable", "--array=0-3", "--cpus-per-task=1", f"--chdir={self.work}",
                         f"--output={self.work}/logs/%A_%a.log", ARRAY, self.list, catalog, *SETTINGS)
        return out.strip().split(";")[0]

    def state(self, job):
        """The state of every task of an array job, by task id."""
        text = self.slurm("squeue", "--array", "--states=all", "--noheader", "--format=%i %T", "--jobs", job)
        states = {}
        for line in text.splitlines():
            task, state = line.split()
            if "_" in task and task.split("_")[1].isdigit():
                states[int(task.split("_")[1])] = state
        return states

    def wait(self, job, timeout=300):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = self.state(job)
            if len(states) == 4 and all(s not in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING")
                                        for s in states.values()):
                return states
            time.sleep(0.2)
        self.fail(f"array {job} did not end: {self.state(job)}")

    def test_array_cancel_and_resubmit(self):
        os.makedirs(os.path.join(self.work, "logs"), exist_ok=True)
        reference = os.path.join(self.work, "reference")
        single = subprocess.run([BIN, "catalog", "generate", self.list, "--output", reference] + SETTINGS,
                                capture_output=True, text=True)
        self.assertEqual(single.returncode, 1, single.stderr)

        catalog = os.path.join(self.work, "catalog")
        job = self.submit(catalog)
        # Cancel task 1 once it is running and has completed an item: it is then making its next one.
        results = os.path.join(catalog, "results", "shard-1.jsonl")
        deadline = time.monotonic() + 120
        cancelled_inside = False
        while time.monotonic() < deadline:
            running = self.state(job).get(1) == "RUNNING"
            lines = 0
            if os.path.exists(results):
                with open(results) as f:
                    lines = f.read().count("\n")
            if running and lines >= 1:
                staging = os.listdir(os.path.join(catalog, "staging"))
                cancelled_inside = any(not n.endswith(".lock") for n in staging)
                self.slurm("scancel", f"{job}_1")
                break
            time.sleep(0.02)
        else:
            self.fail(f"task 1 never ran: {self.state(job)}")
        first = self.wait(job)
        self.assertEqual(first[1], "CANCELLED", first)
        self.assertTrue(cancelled_inside, "the cancel landed between items")
        with open(results) as f:
            before = f.read().count("\n")
        self.assertLess(before, 3, "task 1 was stopped before the end of its shard")

        second = self.wait(self.submit(catalog))
        self.assertEqual(sorted(second.values()), ["COMPLETED", "COMPLETED", "COMPLETED", "FAILED"], second)

        status = subprocess.run([BIN, "catalog", "status", self.list, catalog, "--json"], capture_output=True,
                                text=True)
        self.assertEqual(status.returncode, 3, status.stdout + status.stderr)
        lines = [json.loads(line) for line in status.stdout.splitlines()]
        self.assertEqual(lines[-1]["done"], 11)
        self.assertEqual([(line["input"], line["state"]) for line in lines[:-1]], [("videos/broken.mp4", "failed")])

        records = []
        for name in sorted(os.listdir(os.path.join(catalog, "results"))):
            with open(os.path.join(catalog, "results", name)) as f:
                records += [json.loads(line) for line in f]
        done = [r["key"] for r in records if r["status"] == "done"]
        self.assertEqual(len(done), 11)
        self.assertEqual(len(set(done)), 11, "each item is made once, cancelled task and resubmission included")
        failed = {r["input"] for r in records if r["status"] == "failed"}
        self.assertEqual(failed, {"videos/broken.mp4"})
        self.assertEqual({r["shard"] for r in records}, {"0/4", "1/4", "2/4", "3/4"})

        made, expected = outputs(catalog), outputs(reference)
        self.assertEqual(sorted(made), sorted(expected))
        self.assertTrue(made == expected, "the array's outputs are byte for byte one process's")
        self.assertEqual(os.listdir(os.path.join(catalog, "staging")), [])
        print(f"\nslurm: cluster up in {self.start_seconds:.1f} s; task 1 cancelled inside an item after "
              f"{before} item(s); resubmitted array {second}", flush=True)


if __name__ == "__main__":
    unittest.main()
