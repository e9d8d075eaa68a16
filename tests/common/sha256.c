/* Tests for common/sha256.c against the FIPS 180-4 / NIST example vectors. */
#include "common/sha256.h"
#include "tests/support/test.h"

#include <stdlib.h>

static void test_sha256__matches_the_nist_vectors(void)
{
    char hex[65];
    sha256_hex(hex, "", 0);
    CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha256_hex(hex, "abc", 3);
    CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(hex, two, strlen(two));
    CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_sha256__incremental_updates_equal_one_shot(void)
{
    /* One million 'a's, fed in uneven pieces. */
    struct sha256 c;
    unsigned char d[32];
    char hex[65];
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    sha256_init(&c);
    size_t off = 0, step = 1;
    while (off < 1000000) {
        size_t n = step < 1000000 - off ? step : 1000000 - off;
        sha256_update(&c, a + off, n);
        off += n;
        step = step * 3 % 997 + 1;
    }
    sha256_final(&c, d);
    sha256_to_hex(hex, d);
    CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

int main(void)
{
    TEST_RUN(test_sha256__matches_the_nist_vectors);
    TEST_RUN(test_sha256__incremental_updates_equal_one_shot);
    return test_done();
}
