/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Thread-local slots for winsync.dll, read straight from the TEB.
 * TlsGetValue clears the thread's last error, and mingw's _Thread_local goes
 * through TlsGetValue plus a GetLastError/SetLastError pair: three calls on
 * every fast-path operation.  The first 64 TLS indices are TEB.TlsSlots, a
 * fixed part of the Windows ABI (x64 and x86) that Wine keeps too.
 */
#ifndef WINSYNC_OS_WINE_TLS_H
#define WINSYNC_OS_WINE_TLS_H

#include <windows.h>
#include <winternl.h>

/*
 * The TEB's self pointer (NtCurrentTeb() trips GCC 12's -Warray-bounds):
 * NT_TIB.Self, at %gs:0x30 on x64 and %fs:0x18 on x86.
 */
static inline TEB *ws_wine_teb(void)
{
	TEB *teb;

#if defined(__x86_64__)
	__asm__("movq %%gs:0x30, %0" : "=r"(teb));
#elif defined(__i386__)
	__asm__("movl %%fs:0x18, %0" : "=r"(teb));
#else
#error "winsync.dll: the TEB is known for x86-64 and x86 only"
#endif
	return teb;
}

static inline void *ws_wine_tls_get(DWORD index)
{
	void *value;
	DWORD error;

	if (index < 64)
		return ws_wine_teb()->TlsSlots[index];
	if (index == TLS_OUT_OF_INDEXES)
		return NULL;
	error = GetLastError();
	value = TlsGetValue(index);
	SetLastError(error);
	return value;
}

static inline void ws_wine_tls_set(DWORD index, void *value)
{
	if (index < 64)
		ws_wine_teb()->TlsSlots[index] = value;
	else if (index != TLS_OUT_OF_INDEXES)
		TlsSetValue(index, value);
}

#endif
