"""Port of core/src/main/scala/kafka/utils/PasswordEncoder.scala (Kafka 2.8.2): how a broker keeps
a dynamic password config (``listener.name.<l>.ssl.keystore.password``, ...) in ZooKeeper.

A password is encrypted under a key derived from ``password.encoder.secret`` with PBKDF2 (a
fresh 256-byte salt each time) and written as Kafka writes it, a comma-separated map with the
parameters it was encrypted with, so a value written by a Java broker reads here and the
other way round::

    keyFactoryAlgorithm:PBKDF2WithHmacSHA512,cipherAlgorithm:AES/CBC/PKCS5Padding,keyLength:128,
    salt:<base64>,iterations:4096,encryptedPassword:<base64>,passwordLength:12,
    initializationVector:<base64>

Decoding uses the parameters stored with the value, not the broker's current settings.
"""
from __future__ import annotations

import base64
import os
import re
from typing import Optional

from kafka_py.clients.common.config.config_def import ConfigException, Password

KEY_FACTORY_ALGORITHM_PROP = "keyFactoryAlgorithm"
CIPHER_ALGORITHM_PROP = "cipherAlgorithm"
INITIALIZATION_VECTOR_PROP = "initializationVector"
KEY_LENGTH_PROP = "keyLength"
SALT_PROP = "salt"
ITERATIONS_PROP = "iterations"
ENCRYPTED_PASSWORD_PROP = "encryptedPassword"
PASSWORD_LENGTH_PROP = "passwordLength"
AUTHENTICATION_TAG_LENGTH_PROP = "authenticationTagLength"

DEFAULT_KEY_FACTORY_ALGORITHM = "PBKDF2WithHmacSHA512"
_KEY_FACTORY_HASHES = {"PBKDF2WithHmacSHA512": "SHA512", "PBKDF2WithHmacSHA256": "SHA256",
                       "PBKDF2WithHmacSHA1": "SHA1"}
_AES = re.compile(r"AES/(CBC|GCM)/(PKCS5Padding|NoPadding)\Z")
_GCM_IV_BYTES = 12


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _parse_csv_map(text: str) -> dict[str, str]:
    """CoreUtils.parseCsvMap: ``k1:v1,k2:v2`` (a value may itself hold colons)."""
    result = {}
    for item in text.split(","):
        if item:
            key, _, value = item.partition(":")
            result[key.strip()] = value.strip()
    return result


class PasswordEncoder:
    def __init__(self, secret: Password, key_factory_algorithm: Optional[str] = None,
                 cipher_algorithm: str = "AES/CBC/PKCS5Padding", key_length: int = 128,
                 iterations: int = 4096) -> None:
        self._secret = secret.value if isinstance(secret, Password) else str(secret)
        self.key_factory_algorithm = key_factory_algorithm or DEFAULT_KEY_FACTORY_ALGORITHM
        self.cipher_algorithm = cipher_algorithm
        self.key_length = key_length
        self.iterations = iterations
        self._check_algorithms(self.key_factory_algorithm, cipher_algorithm, key_length)

    @staticmethod
    def _check_algorithms(key_factory_algorithm: str, cipher_algorithm: str, key_length: int) -> None:
        if key_factory_algorithm not in _KEY_FACTORY_HASHES:
            raise ConfigException("password.encoder.keyfactory.algorithm", key_factory_algorithm,
                                  f"kafka-py knows {', '.join(_KEY_FACTORY_HASHES)}")
        if _AES.match(cipher_algorithm) is None:
            raise ConfigException("password.encoder.cipher.algorithm", cipher_algorithm,
                                  "kafka-py knows AES/CBC/PKCS5Padding and AES/GCM/NoPadding")
        if key_length not in (128, 192, 256):
            raise ConfigException("password.encoder.key.length", key_length, "AES keys are 128, 192 or 256 bits")

    def _key(self, key_factory_algorithm: str, key_length: int, salt: bytes, iterations: int) -> bytes:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
        algorithm = getattr(hashes, _KEY_FACTORY_HASHES[key_factory_algorithm])()
        # Java's PBEKeySpec takes the secret's chars; its PBKDF2 feeds them to HMAC as UTF-8.
        return PBKDF2HMAC(algorithm, key_length // 8, salt, iterations).derive(self._secret.encode("utf-8"))

    def encode(self, password: Password | str) -> str:
        from cryptography.hazmat.primitives import padding
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        text = password.value if isinstance(password, Password) else password
        salt = os.urandom(256)
        key = self._key(self.key_factory_algorithm, self.key_length, salt, self.iterations)
        mode_name = _AES.match(self.cipher_algorithm).group(1)
        params: dict[str, str] = {}
        if mode_name == "GCM":
            iv = os.urandom(_GCM_IV_BYTES)
            encryptor = Cipher(algorithms.AES(key), modes.GCM(iv)).encryptor()
            encrypted = encryptor.update(text.encode("utf-8")) + encryptor.finalize() + encryptor.tag
            params[AUTHENTICATION_TAG_LENGTH_PROP] = "128"
        else:
            iv = os.urandom(16)
            padder = padding.PKCS7(128).padder()
            data = padder.update(text.encode("utf-8")) + padder.finalize()
            encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
            encrypted = encryptor.update(data) + encryptor.finalize()
        fields = {
            KEY_FACTORY_ALGORITHM_PROP: self.key_factory_algorithm,
            CIPHER_ALGORITHM_PROP: self.cipher_algorithm,
            KEY_LENGTH_PROP: str(self.key_length),
            SALT_PROP: _b64(salt),
            ITERATIONS_PROP: str(self.iterations),
            ENCRYPTED_PASSWORD_PROP: _b64(encrypted),
            # Java counts UTF-16 code units; the sanity check on decoding compares the same
            PASSWORD_LENGTH_PROP: str(len(text.encode("utf-16-le")) // 2),
            INITIALIZATION_VECTOR_PROP: _b64(iv),
            **params,
        }
        return ",".join(f"{k}:{v}" for k, v in fields.items())

    def decode(self, encoded_password: str) -> Password:
        from cryptography.hazmat.primitives import padding
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        try:
            params = _parse_csv_map(encoded_password)
            key_factory_algorithm = params[KEY_FACTORY_ALGORITHM_PROP]
            cipher_algorithm = params[CIPHER_ALGORITHM_PROP]
            key_length = int(params[KEY_LENGTH_PROP])
            self._check_algorithms(key_factory_algorithm, cipher_algorithm, key_length)
            salt = base64.b64decode(params[SALT_PROP])
            iterations = int(params[ITERATIONS_PROP])
            encrypted = base64.b64decode(params[ENCRYPTED_PASSWORD_PROP])
            password_length = int(params[PASSWORD_LENGTH_PROP])
            iv = base64.b64decode(params[INITIALIZATION_VECTOR_PROP])
        except (KeyError, ValueError) as e:
            raise ConfigException("password", "[hidden]", f"Password could not be decoded: {e!r}") from None
        key = self._key(key_factory_algorithm, key_length, salt, iterations)
        try:
            if _AES.match(cipher_algorithm).group(1) == "GCM":
                tag_bytes = int(params.get(AUTHENTICATION_TAG_LENGTH_PROP, "128")) // 8
                decryptor = Cipher(algorithms.AES(key), modes.GCM(iv, encrypted[-tag_bytes:],
                                                                  min_tag_length=tag_bytes)).decryptor()
                plain = decryptor.update(encrypted[:-tag_bytes]) + decryptor.finalize()
            else:
                decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
                unpadder = padding.PKCS7(128).unpadder()
                plain = unpadder.update(decryptor.update(encrypted) + decryptor.finalize()) + unpadder.finalize()
            password = plain.decode("utf-8")
        except Exception:  # noqa: BLE001 - a wrong secret shows as bad padding, a bad tag or bad UTF-8
            raise ConfigException("password", "[hidden]", "Password could not be decoded") from None
        if len(password.encode("utf-16-le")) // 2 != password_length:
            raise ConfigException("password", "[hidden]", "Password could not be decoded, sanity check of length "
                                  "failed")
        return Password(password)
