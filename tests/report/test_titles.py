"""Issue 36: a report's title named `--kernel attention`'s launch "entry 2 attention_so": an identifier cut
mid-word. A title keeps names whole (a content hash shortened to 12 digits, a long signature cut at a separator)."""

from __future__ import annotations

from advisor.report.build import TITLE_NAME_CHARS, short_name


def test_a_kernel_name_stays_whole():
    assert short_name("2 attention_softmax_kernel") == "2 attention_softmax_kernel"


def test_a_content_hash_keeps_its_first_12_digits():
    assert short_name("n_efb2b95107bad1b0cf01b9a1e793f161feb05309") == "n_efb2b95107ba"


def test_a_long_name_is_cut_at_a_separator_with_an_ellipsis():
    name = "12 ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_64x3_tn_with_a_longer_suffix_still"
    short = short_name(name)
    assert short.endswith("…") and len(short) <= TITLE_NAME_CHARS + 1
    assert name.startswith(short[:-1]) and name[len(short) - 1] in " _:,<("  # the cut is at a separator


def test_the_pdf_footer_cuts_a_long_title_at_a_boundary():
    """The PDF footer read "…entry 1 ampere_fp16_s16816gemm_fp16_256x12": a name cut mid-word (issue 36)."""
    from advisor.report.html import FOOTER_CHARS, _footer

    title = "Profile findings: ncu_multi_kernel/details.csv, entry 1 ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_tn"
    footer = _footer(title)
    assert footer == "Profile findings: ncu_multi_kernel/details.csv, entry 1 ampere_fp16_s16816gemm_fp16…"
    assert len(footer) <= FOOTER_CHARS and _footer("Profile findings: a.json") == "Profile findings: a.json"
