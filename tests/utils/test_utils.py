"""kafka_py/clients/common/utils/utils.py: Kafka's Utils.abs and Java int wrapping."""
from kafka_py.clients.common.utils.utils import to_int32, utils_abs


def test_utils_abs_maps_min_value_to_zero() -> None:
    assert utils_abs(-2**31) == 0
    assert utils_abs(-5) == 5 and utils_abs(7) == 7
    # Kafka's abs, not a mask: -1 is 1, where n & 0x7fffffff would give 2147483647
    assert utils_abs(-1) == 1


def test_to_int32_wraps_as_java_int_arithmetic() -> None:
    assert to_int32(2**31 - 1) == 2**31 - 1
    assert to_int32(2**31) == -2**31
    assert to_int32(2**32) == 0
    assert to_int32(-1) == -1
    assert to_int32(-2**31 - 1) == 2**31 - 1
    assert to_int32(31 * 2**31 + 5) == -2**31 + 5
