#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Shared by the scripts that fetch Debian source packages
# (contrib/check-intree.sh, contrib/mpich-rma-suite.sh).  Source it.

# Print the packages of the arguments that are not installed.
missing_packages() {
    local p out=
    for p in "$@"; do
        [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" = "install ok installed" ] || out="$out $p"
    done
    printf '%s' "$out"
}

# Is there a deb-src entry in apt's sources (either format)?
has_deb_src() {
    grep -sqE '^[[:space:]]*deb-src[[:space:]]|^[[:space:]]*Types:.*[[:space:]]deb-src([[:space:]]|$)' \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources
}

# Add Debian bookworm's source archive (the same archive as the binaries).
add_deb_src() {
    cat > /etc/apt/sources.list.d/debian-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
}
