/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Win32 synchronization API on winsync: events, mutexes, semaphores,
 * waitable thread handles and WaitForMultipleObjects, with the return values
 * and error codes that Win32 documents.
 *
 * One source, three builds:
 *
 *   Windows, kernel32's objects    #include <windows.h> as usual; this header
 *                                  then only includes <windows.h>.
 *   Windows, winsync.dll           compile with -DWINSYNC_WIN32_REPLACE and
 *                                  link with -lwinsync: the names below are
 *                                  mapped to winsync_* exported by winsync.dll.
 *                                  Include this header after any Windows header.
 *   Linux, native                  this header declares the Win32 types and
 *                                  names itself; link with -lwinsync-win32.
 *
 * Under Wine, winsync.dll makes Linux system calls itself.  On real Windows
 * (or when its Wine check fails) the Create* functions fail with
 * ERROR_NOT_SUPPORTED.  Handles that winsync did not create go to kernel32
 * unchanged in the DLL (CloseHandle, WaitForSingleObject, and
 * WaitForMultipleObjects when none of the handles is winsync's); mixing both
 * kinds in one wait fails with ERROR_INVALID_HANDLE.
 *
 * Unnamed objects only: a name gives ERROR_NOT_SUPPORTED.  Security
 * attributes are ignored.  There are no APCs: bAlertable is ignored.
 * CREATE_SUSPENDED is not supported (ERROR_INVALID_PARAMETER).
 * SignalObjectAndWait signals, then waits: two steps, not one as in NT.
 * GetLastError is thread-local; in the DLL it is kernel32's own.
 * In the DLL a thread handle is signaled when the thread has ended, after
 * its DLL detach, as kernel32's is; GetExitCodeThread then also reports
 * ExitThread's code.  Natively it is signaled when the thread's start
 * routine returns or it calls pthread_exit.
 * Not covered (in the DLL they stay kernel32's and do not know winsync's
 * handles): the Create*Ex and Open* functions, DuplicateHandle,
 * MsgWaitForMultipleObjects.
 */
#ifndef WINSYNC_WIN32_H
#define WINSYNC_WIN32_H

#ifdef _WIN32
#include <windows.h>
#else
#include <stdint.h>
#endif

#if !defined(_WIN32) || defined(WINSYNC_WIN32_REPLACE) || defined(WINSYNC_WIN32_BUILDING)
#define WINSYNC_WIN32 1

#ifdef __cplusplus
extern "C" {
#endif

#ifndef _WIN32
/* The Win32 types and constants, with their Windows sizes. */
typedef void *HANDLE;
typedef int BOOL;
typedef uint32_t DWORD;
typedef int32_t LONG;
typedef uint16_t WCHAR;
typedef DWORD *LPDWORD;
typedef LONG *LPLONG;
typedef void *LPVOID;
typedef const char *LPCSTR;
typedef const WCHAR *LPCWSTR;
typedef uintptr_t SIZE_T;
typedef uintptr_t ULONG_PTR;
typedef struct _SECURITY_ATTRIBUTES {
	DWORD nLength;
	LPVOID lpSecurityDescriptor;
	BOOL bInheritHandle;
} SECURITY_ATTRIBUTES, *PSECURITY_ATTRIBUTES, *LPSECURITY_ATTRIBUTES;
#define WINAPI
typedef DWORD (WINAPI *LPTHREAD_START_ROUTINE)(LPVOID lpThreadParameter);

#define TRUE  1
#define FALSE 0
#define INFINITE 0xffffffffu
#define MAXIMUM_WAIT_OBJECTS 64
#define WAIT_OBJECT_0    0x00000000u
#define WAIT_ABANDONED_0 0x00000080u
#define WAIT_ABANDONED   WAIT_ABANDONED_0
#define WAIT_TIMEOUT     0x00000102u
#define WAIT_FAILED      0xffffffffu
#define STILL_ACTIVE     0x00000103u
#define CREATE_SUSPENDED                  0x00000004u
#define STACK_SIZE_PARAM_IS_A_RESERVATION 0x00010000u

#define ERROR_SUCCESS           0u
#define ERROR_INVALID_HANDLE    6u
#define ERROR_NOT_ENOUGH_MEMORY 8u
#define ERROR_NOT_SUPPORTED     50u
#define ERROR_INVALID_PARAMETER 87u
#define ERROR_NOT_OWNER         288u
#define ERROR_TOO_MANY_POSTS    298u
#define ERROR_FILE_CORRUPT      1392u
#define ERROR_TOO_MANY_TCBS     155u

#define CreateEvent     CreateEventA
#define CreateMutex     CreateMutexA
#define CreateSemaphore CreateSemaphoreA
#endif /* !_WIN32 */

#if defined(_WIN32) && defined(WINSYNC_WIN32_BUILDING) && defined(WINSYNC_BUILDING_DLL)
#define WINSYNC_WIN32_API __declspec(dllexport)
#elif defined(_WIN32)
#define WINSYNC_WIN32_API __declspec(dllimport)
#else
#define WINSYNC_WIN32_API __attribute__((visibility("default")))
#endif

WINSYNC_WIN32_API HANDLE WINAPI winsync_CreateEventA(LPSECURITY_ATTRIBUTES lpEventAttributes,
						     BOOL bManualReset, BOOL bInitialState,
						     LPCSTR lpName);
WINSYNC_WIN32_API HANDLE WINAPI winsync_CreateEventW(LPSECURITY_ATTRIBUTES lpEventAttributes,
						     BOOL bManualReset, BOOL bInitialState,
						     LPCWSTR lpName);
WINSYNC_WIN32_API BOOL WINAPI winsync_SetEvent(HANDLE hEvent);
WINSYNC_WIN32_API BOOL WINAPI winsync_ResetEvent(HANDLE hEvent);
WINSYNC_WIN32_API BOOL WINAPI winsync_PulseEvent(HANDLE hEvent);

WINSYNC_WIN32_API HANDLE WINAPI winsync_CreateMutexA(LPSECURITY_ATTRIBUTES lpMutexAttributes,
						     BOOL bInitialOwner, LPCSTR lpName);
WINSYNC_WIN32_API HANDLE WINAPI winsync_CreateMutexW(LPSECURITY_ATTRIBUTES lpMutexAttributes,
						     BOOL bInitialOwner, LPCWSTR lpName);
WINSYNC_WIN32_API BOOL WINAPI winsync_ReleaseMutex(HANDLE hMutex);

WINSYNC_WIN32_API HANDLE WINAPI winsync_CreateSemaphoreA(
	LPSECURITY_ATTRIBUTES lpSemaphoreAttributes, LONG lInitialCount, LONG lMaximumCount,
	LPCSTR lpName);
WINSYNC_WIN32_API HANDLE WINAPI winsync_CreateSemaphoreW(
	LPSECURITY_ATTRIBUTES lpSemaphoreAttributes, LONG lInitialCount, LONG lMaximumCount,
	LPCWSTR lpName);
WINSYNC_WIN32_API BOOL WINAPI winsync_ReleaseSemaphore(HANDLE hSemaphore, LONG lReleaseCount,
						       LPLONG lpPreviousCount);

WINSYNC_WIN32_API DWORD WINAPI winsync_WaitForSingleObject(HANDLE hHandle, DWORD dwMilliseconds);
WINSYNC_WIN32_API DWORD WINAPI winsync_WaitForMultipleObjects(DWORD nCount,
							      const HANDLE *lpHandles,
							      BOOL bWaitAll,
							      DWORD dwMilliseconds);
WINSYNC_WIN32_API DWORD WINAPI winsync_WaitForSingleObjectEx(HANDLE hHandle,
							    DWORD dwMilliseconds,
							    BOOL bAlertable);
WINSYNC_WIN32_API DWORD WINAPI winsync_WaitForMultipleObjectsEx(DWORD nCount,
								const HANDLE *lpHandles,
								BOOL bWaitAll,
								DWORD dwMilliseconds,
								BOOL bAlertable);
WINSYNC_WIN32_API DWORD WINAPI winsync_SignalObjectAndWait(HANDLE hObjectToSignal,
							   HANDLE hObjectToWaitOn,
							   DWORD dwMilliseconds, BOOL bAlertable);
WINSYNC_WIN32_API BOOL WINAPI winsync_CloseHandle(HANDLE hObject);

WINSYNC_WIN32_API HANDLE WINAPI winsync_CreateThread(LPSECURITY_ATTRIBUTES lpThreadAttributes,
						     SIZE_T dwStackSize,
						     LPTHREAD_START_ROUTINE lpStartAddress,
						     LPVOID lpParameter, DWORD dwCreationFlags,
						     LPDWORD lpThreadId);
WINSYNC_WIN32_API BOOL WINAPI winsync_GetExitCodeThread(HANDLE hThread, LPDWORD lpExitCode);
WINSYNC_WIN32_API DWORD WINAPI winsync_GetCurrentThreadId(void);
WINSYNC_WIN32_API void WINAPI winsync_Sleep(DWORD dwMilliseconds);
WINSYNC_WIN32_API DWORD WINAPI winsync_GetLastError(void);
WINSYNC_WIN32_API void WINAPI winsync_SetLastError(DWORD dwErrCode);

#ifdef __cplusplus
}
#endif

#ifndef WINSYNC_WIN32_BUILDING
#define CreateEventA           winsync_CreateEventA
#define CreateEventW           winsync_CreateEventW
#define SetEvent               winsync_SetEvent
#define ResetEvent             winsync_ResetEvent
#define PulseEvent             winsync_PulseEvent
#define CreateMutexA           winsync_CreateMutexA
#define CreateMutexW           winsync_CreateMutexW
#define ReleaseMutex           winsync_ReleaseMutex
#define CreateSemaphoreA       winsync_CreateSemaphoreA
#define CreateSemaphoreW       winsync_CreateSemaphoreW
#define ReleaseSemaphore       winsync_ReleaseSemaphore
#define WaitForSingleObject    winsync_WaitForSingleObject
#define WaitForMultipleObjects winsync_WaitForMultipleObjects
#define WaitForSingleObjectEx  winsync_WaitForSingleObjectEx
#define WaitForMultipleObjectsEx winsync_WaitForMultipleObjectsEx
#define SignalObjectAndWait    winsync_SignalObjectAndWait
#define CloseHandle            winsync_CloseHandle
#define CreateThread           winsync_CreateThread
#define GetExitCodeThread      winsync_GetExitCodeThread
#ifndef _WIN32
/* In the DLL these stay kernel32's: its last error is the one winsync sets. */
#define GetCurrentThreadId     winsync_GetCurrentThreadId
#define Sleep                  winsync_Sleep
#define GetLastError           winsync_GetLastError
#define SetLastError           winsync_SetLastError
#endif
#endif /* !WINSYNC_WIN32_BUILDING */

#endif /* winsync's API */

#endif /* WINSYNC_WIN32_H */
