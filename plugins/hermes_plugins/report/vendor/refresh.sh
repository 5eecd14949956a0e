#!/usr/bin/env bash
# Refresh the vendored Apache ECharts build from the npm registry (the one place it comes from).
# Usage: bash refresh.sh [VERSION]   (default: the version pinned below)
# Then update VERSION in README.md and in hermes_plugins/report/html.py (ECHARTS_VERSION) and
# re-run tests/plugins/report/test_report_browser.py.
set -euo pipefail
VERSION="${1:-5.6.0}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "echarts@$VERSION" >/dev/null && tar xzf "echarts-$VERSION.tgz")
cp "$work/package/dist/echarts.common.min.js" "$here/echarts.common.min.js"
cp "$work/package/LICENSE" "$here/LICENSE-echarts"
cp "$work/package/NOTICE" "$here/NOTICE-echarts"
cp "$work/package/licenses/LICENSE-d3" "$here/LICENSE-d3"
sha256sum "$here/echarts.common.min.js"
