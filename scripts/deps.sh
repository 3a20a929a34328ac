#!/usr/bin/env bash
# deps.sh -- install what lapis needs to build and test, on Debian 12.
#
# Installs only the packages that are missing (asked of dpkg-query), after a
# single `apt-get update -qq` and only when something is missing; as root,
# or through sudo otherwise. Prints nothing when nothing is missing, so it is
# cheap to run before every build (make run, make test, .ci/run). Idempotent.
#
# Then looks for a kubectl >= 1.29 for the kubectl-driven tests: versioned
# binaries (kubectl.1.29 ... kubectl.1.33) beside the real path of `kubectl`,
# or `kubectl` itself. It downloads nothing: without one it prints how to get
# one, and those tests skip loudly.
set -euo pipefail

packages=(
	make gcc cmake pkg-config git curl
	liblmdb-dev lmdb-utils
	libmicrohttpd-dev libjansson-dev liburcu-dev libcriterion-dev
	libgnutls28-dev libcurl4-gnutls-dev libyaml-dev libmimalloc-dev
	libpcre2-dev zlib1g-dev
	tzdata
	clang libclang-rt-14-dev llvm-14 clang-format
	python3-yaml python3-kubernetes
)

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	if [[ $status != ii* ]]; then
		missing+=("$p")
	fi
done

# Node.js and npm for the JavaScript client test (tests/e2e/js.sh), asked of
# PATH rather than dpkg: a nodejs from elsewhere (such as NodeSource's, which
# bundles npm and conflicts with Debian's npm package) is as good. Debian 12's
# nodejs 18 runs the client version that test pins.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if ((${#missing[@]} > 0)); then
	if [[ $(id -u) == 0 ]]; then
		as_root=()
	elif command -v sudo >/dev/null 2>&1; then
		as_root=(sudo)
	else
		echo "deps: missing ${missing[*]}; run this script as root or install sudo" >&2
		exit 1
	fi
	echo "deps: installing ${missing[*]}"
	"${as_root[@]}" apt-get update -qq
	"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	echo "deps: done"
fi

# kubectl: the oldest minor version the kubectl-driven tests accept.
min_minor=29
kubectl_minor() {
	# "Client Version: v1.32.4..." -> 32; empty if unknown.
	"$1" version --client 2>/dev/null |
		sed -n 's/^Client Version: v1\.\([0-9][0-9]*\)\..*/\1/p' | head -n 1
}
found=
if command -v kubectl >/dev/null 2>&1; then
	real=$(readlink -f "$(command -v kubectl)")
	dir=$(dirname "$real")
	for minor in 33 32 31 30 29; do
		if [[ -x $dir/kubectl.1.$minor ]]; then
			found=$dir/kubectl.1.$minor
			break
		fi
	done
	if [[ -z $found ]]; then
		minor=$(kubectl_minor kubectl)
		if [[ -n $minor ]] && ((minor >= min_minor)); then
			found=$(command -v kubectl)
		fi
	fi
fi
if [[ -z $found ]]; then
	echo "deps: no kubectl >= 1.$min_minor found; kubectl tests will be skipped." \
		"Install one (Debian's kubernetes-client is too old: use the kubectl" \
		"release of the Kubernetes 'Install Tools' page) and put it on PATH."
fi
