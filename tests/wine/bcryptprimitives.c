/* SPDX-License-Identifier: BSD-3-Clause */
/* ProcessPrng for Wine 8.0 (Debian 12's), which lacks bcryptprimitives.dll: Rust's std for
 * windows-gnu imports it since 1.78. Built with MinGW-w64 into the tests' Wine prefix only; a
 * real Windows (10 and later) has its own. */
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG part = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, part))
            return FALSE;
        data += part;
        len -= part;
    }
    return TRUE;
}
