#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Run the Soft-RoCE VM tests: the ibv driver against rdma_rxe in qemu.
# Same options as test/rxe/run.sh (-h lists them); the packages come from
# usertools/install-deps.sh --rxe.
exec "$(cd "$(dirname "$0")/.." && pwd)/test/rxe/run.sh" "$@"
