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


def prepare_database(db, command_env):
    """Creates database "db" if it does not exist, with the extension, and gives the bench's role
    an unlimited budget (the benches measure releases, not budgets)."""
    if not psql("SELECT 1 FROM pg_database WHERE datname = '%s'" % db, "postgres", command_env).strip():
        psql("CREATE DATABASE %s;" % db, "postgres", command_env)
    psql("CREATE EXTENSION IF NOT EXISTS uldp;\n"
         "SELECT uldp.set_budget(current_user::regrole, 1e12, 1);\n", db, command_env)
