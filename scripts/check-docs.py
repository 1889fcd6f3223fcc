#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# `make style`, for Documentation/: every .rst must parse under docutils with
# no warning (a table that does not parse renders as an error block, and a
# reader sees nothing of it), and every man page must format under groff
# with all warnings on. Prints each problem as file:line: text; exits 1 if
# there was any.
import glob
import io
import subprocess
import sys

import docutils.core
import docutils.utils

bad = 0
for path in sorted(glob.glob('Documentation/**/*.rst', recursive=True)):
    err = io.StringIO()
    with open(path, encoding='utf-8') as f:
        src = f.read()
    docutils.core.publish_doctree(src, source_path=path, settings_overrides={
        'report_level': docutils.utils.Reporter.WARNING_LEVEL,
        'halt_level': docutils.utils.Reporter.SEVERE_LEVEL + 1,
        'warning_stream': err,
    })
    if err.getvalue():
        sys.stdout.write(err.getvalue())
        bad = 1

for path in sorted(glob.glob('Documentation/man/*.[1-8]')):
    r = subprocess.run(['groff', '-man', '-ww', '-z', path],
                       capture_output=True, text=True, check=False)
    if r.returncode or r.stderr:
        sys.stdout.write('%s: groff: %s\n' % (path, r.stderr.strip() or r.returncode))
        bad = 1

sys.exit(bad)
