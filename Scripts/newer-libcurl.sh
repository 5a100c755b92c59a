#!/usr/bin/env bash
# Unpacks the newest libcurl Debian has for this release (its backports: 8.14.1, Debian 13's, for
# Debian 12) into FOLDER without installing it, and prints the folder holding libcurl.so.4.
# `make test` runs the suite a second time with that folder first on LD_LIBRARY_PATH, so Courier
# is tested against the libcurl of the next Debian as well as the system's (7.88.1 on Debian 12):
# libcurl 8.13.0 began removing percent-encoded dot segments, which only such a run showed.
# apt works in FOLDER only (its own source list, lists and cache); the system's apt is untouched.
set -euo pipefail
folder=$(realpath -m "${1:?usage: newer-libcurl.sh FOLDER}") # apt reads relative paths from /etc/apt
found() { find "$folder/root" -name libcurl.so.4 -printf '%h\n' 2>/dev/null | head -1; }
if [ -z "$(found)" ]; then
    . /etc/os-release
    rm -rf "$folder" && mkdir -p "$folder/parts" "$folder/lists/partial" "$folder/cache/archives/partial" "$folder/deb"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $VERSION_CODENAME-backports main" \
        > "$folder/sources.list"
    apt=(apt-get -qq -o Dir::Etc::SourceList="$folder/sources.list" -o Dir::Etc::SourceParts="$folder/parts"
         -o Dir::State::Lists="$folder/lists" -o Dir::Cache="$folder/cache" -o APT::Get::List-Cleanup=0
         -o APT::Sandbox::User=root)
    "${apt[@]}" update >&2
    (cd "$folder/deb" && "${apt[@]}" download "libcurl4/$VERSION_CODENAME-backports" >&2)
    dpkg -x "$folder"/deb/libcurl4_*.deb "$folder/root"
fi
lib=$(found)
# The version the run will load, checked, so the second run cannot quietly use the system's.
version_of() { python3 -c "import ctypes, sys; f = ctypes.CDLL(sys.argv[1]).curl_version; f.restype = ctypes.c_char_p; print(f().decode())" "$1"; }
version=$(version_of "$lib/libcurl.so.4")
system=$(version_of libcurl.so.4)
echo "newer libcurl: ${version%% *} (the system's: ${system%% *})" >&2
[ "${version%% *}" != "${system%% *}" ] || { echo "newer-libcurl: $lib holds the system's version" >&2; exit 1; }
echo "$lib"
