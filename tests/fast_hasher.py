"""A PBKDF2 hasher with one iteration: test users need no strong hashes, and a million
iterations per created user cost about a second each on this machine."""
from django.contrib.auth.hashers import PBKDF2PasswordHasher


class FastPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = 1
