"""The KV-cache concurrency cap (roofline.calc.kv_capacity), by hand."""

from __future__ import annotations

from roofline.calc.kv_capacity import max_concurrent_sequences


def test_kv_capacity_by_hand():
    # a 7B-class model in INT8 (7 GB) on a 256 GB socket, 4 instances, fp16 KV of 32 layers x 8 kv heads
    # x 128: 2 * 32 * 8 * 128 * 2 = 131072 B/token; 2048 + 256 tokens a sequence -> 302 MB each
    e_kv = 2 * 32 * 8 * 128 * 2
    k = max_concurrent_sequences(256e9, 7e9, e_kv, 2048 + 256, instances=4, reserve_bytes=9e9)
    assert k == int((256e9 - 16e9) // (4 * e_kv * 2304)) == 198
    assert max_concurrent_sequences(8e9, 9e9, e_kv, 1024) == 0  # the weights do not fit
