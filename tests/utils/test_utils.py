"""kafka_py/utils/utils.py: Kafka's Utils.abs."""
from kafka_py.utils.utils import utils_abs


def test_utils_abs_maps_min_value_to_zero() -> None:
    assert utils_abs(-2**31) == 0
    assert utils_abs(-5) == 5 and utils_abs(7) == 7
    # Kafka's abs, not a mask: -1 is 1, where n & 0x7fffffff would give 2147483647
    assert utils_abs(-1) == 1
