"""nginx.py — docker/nginx.conf made runnable here, for bench/load.sh, by the
tests' own mapping (tests/integration/nginx_util.py: the upstream names on
loopback ports, logs and temp files in DIR; nothing else changed).

    nginx.py DIR LISTEN_PORT PORT_1 PORT_2

Prints the command that runs nginx in the foreground, NUL-separated."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests/integration"))
import nginx_util  # noqa: E402


def main():
    directory, listen, port1, port2 = sys.argv[1:5]
    conf = nginx_util.render(directory, {"stallscope-1": f"127.0.0.1:{port1}",
                                         "stallscope-2": f"127.0.0.1:{port2}"},
                             listen=f"127.0.0.1:{listen}")
    checked = nginx_util.check(conf)
    if checked.returncode != 0:
        sys.exit(checked.stderr)
    sys.stdout.write("\0".join(nginx_util.command(conf, "-g", "daemon off;")) + "\0")


if __name__ == "__main__":
    main()
