"""test/bench/bench_psql.py -- running SQL scripts through psql, for the Python benches.

The command comes from an environment variable (the bench scripts set it to run psql as the
postgres OS user against their throwaway cluster), defaulting to PostgreSQL 15's psql.
"""
import os
import shlex
import subprocess
import sys


def psql(script, db, command_env):
    """Runs "script" in database "db"; returns its unaligned, tuples-only output, or exits."""
    prefix = os.environ.get(command_env, "/usr/lib/postgresql/15/bin/psql")
    command = shlex.split(prefix) + ["-X", "-q", "-A", "-t", "-F", "|", "-v", "ON_ERROR_STOP=1",
                                     "-d", db]
    result = subprocess.run(command, input=script, text=True, capture_output=True)
    if result.returncode != 0:
        sys.exit("psql failed (%d):\n%s" % (result.returncode, result.stderr[-4000:]))
    return result.stdout
