"""A full disk and a read-only store, made for real (a small tmpfs, a read-only bind mount) in
a private mount namespace: every hook exits 0, and every item is either kept or counted as
lost where ``doctor`` shows it — checked by counting."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.mounts import SCENARIO_HEAD, run_scenario, scenario_env

pytestmark = pytest.mark.slow

HOOKS = 40
PROMPT_BYTES = 40_000  # one spooled item ≈ 32 KB once capped: the 1 MiB reserve holds ~30

DISK_FULL = SCENARIO_HEAD + r'''
HOOKS, PROMPT = int(sys.argv[2]), int(sys.argv[3])
cli("save", "--project", "/fault/project", "written before the disk filled")  # store + reserve
reserve = (HOME / "spool" / "reserve").stat().st_size
# Fill the disk to the last byte.
fd = os.open(MOUNT / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
for chunk in (1 << 16, 1 << 12, 1 << 8, 1):
    try:
        while True:
            os.write(fd, b"\0" * chunk)
    except OSError:
        pass
os.close(fd)
codes = [hook(i, PROMPT) for i in range(HOOKS)]
from aletheia import spool_reserve
spooled = spool_lines()
with spool_reserve.peek(str(HOME / "spool")) as lines:
    in_reserve = len(lines)
lost = spool_reserve.losses(str(HOME / "spool"))
doctor_full = cli("doctor", check=False)
save_full = cli("save", "--project", "/fault/project", "while the disk is full", check=False)
# Free the disk: the next command replays everything that was kept.
(MOUNT / "filler").unlink()
cli("stats")
after = memories()
left = spool_lines()
reserve_again = (HOME / "spool" / "reserve").stat().st_size
doctor_after = cli("doctor", check=False)
cli("spool", "drop", "--lost")
doctor_cleared = cli("doctor", "--json", check=False)
print(json.dumps({
    "codes": codes, "spooled": spooled, "in_reserve": in_reserve, "lost": lost,
    "reserve": reserve,
    "doctor_full": doctor_full.stdout, "doctor_full_code": doctor_full.returncode,
    "save_full": save_full.stdout + save_full.stderr, "save_full_code": save_full.returncode,
    "memories_after": after, "spool_left": left, "reserve_again": reserve_again,
    "doctor_after": doctor_after.stdout, "doctor_cleared": json.loads(doctor_cleared.stdout),
}))
'''


def test_a_full_disk_loses_nothing_silently(tmp_path: Path) -> None:
    script = DISK_FULL.replace("HOOKS, PROMPT = int(sys.argv[2]), int(sys.argv[3])",
                               f"HOOKS, PROMPT = {HOOKS}, {PROMPT_BYTES}")
    got = run_scenario(script, tmp_path / "mnt", size="16m", env=scenario_env())
    assert got["codes"] == [0] * HOOKS  # a hook exits 0 whatever happens
    assert got["reserve"] == 1 << 20
    lost = got["lost"]["items"]
    print(f"\n{HOOKS} hooks on a full disk: {got['in_reserve']} kept in the reserve, "
          f"{got['spooled']} in spool files, {lost} counted as lost; "
          f"{got['memories_after'] - 1} stored once there was room again")
    assert got["in_reserve"] >= 1 and lost >= 1  # the reserve took what it could, then ran out
    assert "disk full" in str(got["lost"]["last_reason"])
    print(got["doctor_full"])
    assert got["doctor_full_code"] == 1
    assert "PROBLEM  lost" in got["doctor_full"] and f"{lost} hook item(s)" in got["doctor_full"]
    assert "PROBLEM  disk" in got["doctor_full"] and "the disk is full" in got["doctor_full"]
    saved_while_full = got["save_full_code"] == 0
    if not saved_while_full:
        assert got["save_full"].startswith("Error: ") and len(got["save_full"].strip().splitlines()) == 1
    # Nothing lost silently: once there is room, every hook's item is stored or was counted as
    # lost (some may have gone straight into hub.db while SQLite still found a free page).
    assert got["memories_after"] + lost == 1 + HOOKS + saved_while_full, got
    assert got["spool_left"] == 0 and got["reserve_again"] == 1 << 20
    assert "PROBLEM  lost" in got["doctor_after"]
    cleared = {c["name"]: c["status"] for c in got["doctor_cleared"]["checks"]}
    assert cleared["lost"] == "ok", got["doctor_cleared"]
    assert cleared["disk"] == "ok", [c for c in got["doctor_cleared"]["checks"] if c["name"] == "disk"]


READ_ONLY = SCENARIO_HEAD + r'''
cli("save", "--project", "/fault/project", "written before the store went read-only")
db = HOME / "hub.db"
subprocess.run(["mount", "--bind", str(db), str(db)], check=True)
subprocess.run(["mount", "-o", "remount,ro,bind", str(db)], check=True)
codes = [hook(i, 100) for i in range(5)]
spooled = spool_lines()
reasons = sorted({json.loads(l).get("why") for p in (HOME / "spool").glob("hook-spool*")
                  for l in p.read_bytes().splitlines() if l.strip()})
save = cli("save", "--project", "/fault/project", "a note", check=False)
stats = cli("stats", check=False)
doctor = cli("doctor", check=False)
subprocess.run(["umount", str(db)], check=True)
cli("stats")
print(json.dumps({"codes": codes, "spooled": spooled, "reasons": reasons,
                  "save": save.stdout + save.stderr, "save_code": save.returncode,
                  "stats_code": stats.returncode, "doctor": doctor.stdout,
                  "doctor_code": doctor.returncode, "memories_after": memories(),
                  "spool_left": spool_lines()}))
'''


def test_a_read_only_store_spools_and_loses_nothing(tmp_path: Path) -> None:
    got = run_scenario(READ_ONLY, tmp_path / "mnt", size="8m", env=scenario_env())
    assert got["codes"] == [0] * 5 and got["spooled"] == 5
    # (A hook past its watchdog on a busy machine spools first, legitimately.)
    assert set(got["reasons"]) <= {"read-only", "watchdog", "watchdog-db"}
    assert got["save_code"] == 1 and got["save"].startswith("Error: ")
    assert "readonly" in got["save"] and len(got["save"].strip().splitlines()) == 1
    assert got["stats_code"] == 0  # reading still works; the spool waits
    print("\n" + got["doctor"])
    assert got["doctor_code"] == 1 and "PROBLEM  writable    hub.db cannot be written" in got["doctor"]
    assert got["memories_after"] == 1 + 5 and got["spool_left"] == 0
