from decimal import Decimal

from studio.core.entries import PriceEntry
from studio.gateway.cost import Usage, compute, display


def price(**kw) -> PriceEntry:
    return PriceEntry(model_id="m", upstream_id=kw.pop("upstream_id", None), effective_from=kw.pop("at", 0.0), **kw)


def test_tokens_with_cached_input_at_their_own_rate():
    p = price(input_per_million=Decimal("3"), output_per_million=Decimal("15"), cached_per_million=Decimal("0.3"))
    cost = compute(p, Usage(input_tokens=1_000_000, cached_tokens=500_000, output_tokens=100_000))
    assert cost == Decimal("1.5") + Decimal("0.15") + Decimal("1.5")


def test_images_by_size_and_quality_fall_back_to_size_then_any():
    p = price(per_image={"1024x1024/high": Decimal("0.17"), "2K": Decimal("0.035"), "*": Decimal("0.04")})
    usage = Usage(images=[("1024x1024", "high"), ("2K", "auto"), ("1536x1024", "low")], requests=0)
    assert compute(p, usage) == Decimal("0.245")


def test_video_seconds_by_resolution_with_audio():
    p = price(per_video_second={"720p": Decimal("0.10"), "720p+audio": Decimal("0.14")},
              per_request=Decimal("0.01"))
    assert compute(p, Usage(video_seconds=5, video_resolution="720P", video_audio=True)) == Decimal("0.71")
    assert compute(p, Usage(video_seconds=5, video_resolution="720p")) == Decimal("0.51")


def test_no_price_costs_nothing_and_display_is_plain_decimal():
    assert compute(None, Usage(input_tokens=10)) == 0
    assert display(Decimal("0.000123000")) == "0.000123"
    assert display(0) == "0"


def test_nano_dollars_round_up_and_back():
    from studio.gateway.cost import from_nano, to_nano

    assert to_nano(Decimal("0.0000000011")) == 2  # a fraction of a nano-dollar is never lost
    assert from_nano(to_nano(Decimal("1.25"))) == Decimal("1.25")


def test_a_per_request_fee_is_added_once_per_request():
    p = price(per_request=Decimal("0.01"), input_per_million=Decimal("1"))
    assert compute(p, Usage(input_tokens=1_000_000)) == Decimal("1.01")
    assert compute(p, Usage(requests=0)) == 0


def test_integer_cost_matches_decimal_arithmetic_to_the_nano_dollar():
    """Admission and settlement work in whole nano-dollars, in integers where the price allows;
    every cost must come out exactly as the ``Decimal`` arithmetic gives it, rounded up."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from studio.gateway.cost import _decimal_cost, compute_float, compute_nano, to_nano

    money = st.builds(lambda n, places: Decimal(n).scaleb(-places), st.integers(0, 10**12), st.sampled_from([0, 3, 9, 12]))
    sizes = st.sampled_from(["1024x1024", "2K", "1536x1024"])
    qualities = st.sampled_from(["low", "high", "auto"])

    @settings(max_examples=400, deadline=None)
    @given(inp=money, out=money, cached=st.none() | money, request=money,
           per_image=st.dictionaries(st.sampled_from(["1024x1024/high", "2K", "*/low", "*"]), money, max_size=3),
           tokens=st.tuples(st.integers(-5, 10**7), st.integers(-5, 10**7), st.integers(-5, 10**7)),
           images=st.lists(st.tuples(sizes, qualities), max_size=3), requests=st.integers(0, 2))
    def check(inp, out, cached, request, per_image, tokens, images, requests):
        p = price(input_per_million=inp, output_per_million=out, cached_per_million=cached, per_request=request,
                  per_image=per_image)
        usage = Usage(input_tokens=tokens[0], output_tokens=tokens[1], cached_tokens=tokens[2], images=images,
                      requests=requests)
        exact = _decimal_cost(p, usage)
        assert compute(p, usage) == exact
        assert str(compute(p, usage)) == str(exact)  # the same digits, as a record stores them
        assert compute_nano(p, usage) == to_nano(exact)
        assert compute_float(p, usage) == float(exact)  # a stream's cost, as a JSON number

    check()


def test_a_rate_finer_than_a_nano_dollar_is_still_charged_exactly():
    from studio.gateway.cost import compute_nano

    p = price(input_per_million=Decimal("0.0000000001"))  # 1e-16 dollars a token
    assert compute_nano(p, Usage(input_tokens=10**7, requests=0)) == 1  # 1e-9 dollars, not 0
    assert compute(p, Usage(input_tokens=10**7, requests=0)) == Decimal("0.000000001")
