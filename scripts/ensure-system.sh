#!/usr/bin/env sh
# What `make demo` and `make test` need from the system, installed where we may, or one line saying
# what to install. Usage: scripts/ensure-system.sh demo|test PYTHON
#   demo: a Python 3.11+ that can create virtual environments (Debian: python3-venv)
#   test: that, plus headless Chromium and its driver for the report test (Debian: chromium,
#         chromium-driver)
# Packages are installed with apt-get when running as root or with password-less sudo; set
# TRUSTLAB_NO_SYSTEM_INSTALL=1 to never install (then a missing package stops with one line).
set -u
mode=${1:-test}
python=${2:-python3}

say() { printf 'trustlab setup: %s\n' "$1" >&2; }

# The command that may install system packages, or nothing.
installer() {
    [ "${TRUSTLAB_NO_SYSTEM_INSTALL:-0}" = 1 ] && return 1
    command -v apt-get >/dev/null 2>&1 || return 1
    if [ "$(id -u)" = 0 ]; then
        echo ""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        echo "sudo"
    else
        return 1
    fi
}

# apt_install PACKAGE... : install, quietly; non-zero when it cannot.
apt_install() {
    prefix=$(installer) || return 1
    DEBIAN_FRONTEND=noninteractive $prefix apt-get update -qq >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive $prefix apt-get install -y -qq "$@" >/dev/null 2>&1
}

python_ok() {
    "$python" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null
}

if ! command -v "$python" >/dev/null 2>&1; then
    say "no '$python' found: install Python 3.11 or newer (or run make PYTHON=/path/to/python3.11)"
    exit 1
fi
if ! python_ok; then
    if "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        apt_install python3-venv && python_ok || {
            say "'$python' cannot create virtual environments: install python3-venv (sudo apt-get install python3-venv) and run make $mode again"
            exit 1
        }
    else
        say "'$python' is older than 3.11: install Python 3.11 or newer (or run make PYTHON=/path/to/python3.11)"
        exit 1
    fi
fi

if [ "$mode" = test ]; then
    if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
        apt_install chromium chromium-driver
        if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
            say "the report test needs headless Chromium: install chromium and chromium-driver (sudo apt-get install chromium chromium-driver) and run make test again"
            exit 1
        fi
    fi
fi
exit 0
