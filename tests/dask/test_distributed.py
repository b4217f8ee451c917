"""With a dask.distributed Client active, the passes run on its cluster and the answer is the same."""

from __future__ import annotations

import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from .conftest import assert_same, data_for, solve  # noqa: E402


def test_solve_lad_on_a_local_cluster(reference):
    X, y = data_for("lad")
    with (distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client,
          distributed.get_task_stream(client) as stream):
        result = solve("lad", da.from_array(X, chunks=(57, X.shape[1])), y, engine="dask")
    assert_same(result, reference("lad"))
    ran = {task["key"][0] if isinstance(task["key"], tuple) else task["key"] for task in stream.data}
    assert any(key.startswith("_group_partial") for key in ran)  # the passes ran on the cluster
