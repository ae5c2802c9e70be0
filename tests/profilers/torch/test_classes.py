"""Kernel classes from name patterns (data/kernels.yaml, first match wins) and the file's checks."""

import pytest

from advisor.core.errors import AdvisorError
from advisor.profilers.torch import KIND
from advisor.profilers.torch.classes import knowledge, parse

NAMES = {
    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)": "communication",
    "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)": "communication",
    "Memcpy DtoD (Device -> Device)": "memory",
    "dma_request": "memory",  # MTIA
    "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>": "attention",
    "fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel)": "attention",
    "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw": "convolution",
    "cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1": "convolution",
    "void fft2d_r2c_32x32<float, false, 5u, true>(float2*, float const*, int)": "convolution",
    "ampere_sgemm_128x64_nn": "gemm",
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1>(Params)": "gemm",
    "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1": "gemm",  # ROCm Tensile
    "void at::native::vectorized_elementwise_kernel<4, fbgemm_gpu::_float_to_hfp8_gpu(at::Tensor)>": "elementwise",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>": "elementwise",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float>>>": "reduction",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float)": "reduction",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1, true>": "reduction",
    "void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>>": "other",
}


@pytest.mark.parametrize(("name", "expected"), NAMES.items())
def test_kernel_names_fall_in_their_class(name, expected):
    know = knowledge()
    assert know.classes[know.class_of(name)].key == expected


def test_classify_numbers_distinct_names_once():
    know = knowledge()
    codes = know.classify(list(NAMES))
    assert [know.classes[i].key for i in codes.tolist()] == list(NAMES.values())


def test_thresholds_are_data_in_their_units():
    know = knowledge()
    assert know.kernel_wait_threshold == 30_000.0  # ns: HTA's consecutive_kernel_delay, 30 µs
    assert 0 < know.low_occupancy < 1
    assert "cudaLaunchKernel" in know.launches and "hipLaunchKernel" in know.launches
    assert "cudaGraphLaunch" not in know.launches
    assert {"cudaDeviceSynchronize", "aten::item", "aten::_local_scalar_dense"} <= know.syncs


def test_a_misspelt_or_missing_key_names_the_file_and_the_key():
    data = dict(KIND.data("kernels.yaml"))
    data["kernel_wait_treshold_us"] = data.pop("kernel_wait_threshold_us")
    with pytest.raises(AdvisorError, match=r"kernels.yaml.*kernel_wait_treshold_us: unknown key.*threshold"):
        parse(data)
    del data["kernel_wait_treshold_us"]
    with pytest.raises(AdvisorError, match="kernel_wait_threshold_us: missing"):
        parse(data)


def test_a_bad_pattern_or_class_list_is_refused():
    data = dict(KIND.data("kernels.yaml"))
    with pytest.raises(AdvisorError, match="dataloader: not a regular expression"):
        parse({**data, "dataloader": ["enumerate(DataLoader"]})
    with pytest.raises(AdvisorError, match="no class 'communication'"):
        parse({**data, "classes": [c for c in data["classes"] if c["key"] != "communication"]})
    with pytest.raises(AdvisorError, match="low_occupancy: expected a number"):
        parse({**data, "low_occupancy": 25})
