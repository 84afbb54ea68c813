/**
 * The pseudo-terminal without a native module (docs/terminal.md): a small Python 3 program
 * (standard library only: `pty`, `fcntl`, `termios`) that forks a login shell on a new pty,
 * copies its stdin to the pty and the pty's output to its stdout, and applies window sizes
 * read from fd 3 (`<cols> <rows>\n`) with TIOCSWINSZ, so the shell gets SIGWINCH. It exits
 * with the shell's status (128+N after signal N). When its stdin closes it hangs the shell
 * up (SIGHUP to the session, SIGKILL after 3 s).
 *
 * Python and not util-linux `script`: `script` reads the window size only from its own
 * terminal, which the agent does not have (its stdin is a pipe), so a resize could not
 * reach the shell; `node-pty` needs a compiler on the board.
 *
 * argv: <cols> <rows> <user> <via> <shell>: `user` empty = the agent's own; as root the helper
 * switches to the user itself (initgroups, setgid, setuid); otherwise `via` = `sudo` runs
 * `sudo -n -u <user> -i`. `shell` empty = the user's login shell (MM_TERMINAL_SHELL overrides).
 */
export const PTY_HELPER_SOURCE = String.raw`
import errno, fcntl, os, pty, pwd, select, signal, struct, sys, termios, time
cols, rows, user = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
via = sys.argv[4] if len(sys.argv) > 4 else ''
shell_override = sys.argv[5] if len(sys.argv) > 5 else ''
try:
    pw = pwd.getpwnam(user) if user else pwd.getpwuid(os.getuid())
except KeyError:
    sys.stderr.write('no such user %s\n' % user); sys.exit(125)
shell = shell_override or pw.pw_shell or '/bin/sh'
if os.path.basename(shell) in ('nologin', 'false'):
    sys.stderr.write('the user %s has no login shell (%s)\n' % (pw.pw_name, shell)); sys.exit(126)
pid, fd = pty.fork()
if pid == 0:
    try:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
        env = {'HOME': pw.pw_dir, 'USER': pw.pw_name, 'LOGNAME': pw.pw_name, 'SHELL': shell, 'TERM': 'xterm-256color',
               'PATH': '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'LANG': os.environ.get('LANG', 'C.UTF-8')}
        if via == 'sudo':
            os.execvpe('sudo', ['sudo', '-n', '-u', pw.pw_name, '-i'], dict(env, HOME=os.environ.get('HOME', '/')))
        if os.getuid() != pw.pw_uid:
            os.initgroups(pw.pw_name, pw.pw_gid); os.setgid(pw.pw_gid); os.setuid(pw.pw_uid)
        try:
            os.chdir(pw.pw_dir)
        except OSError:
            os.chdir('/')
        os.execve(shell, ['-' + os.path.basename(shell)], env)
    except Exception as e:
        sys.stderr.write('cannot start the shell: %s\r\n' % e)
    os._exit(127)
for f in (fd, 0, 3):
    fcntl.fcntl(f, fcntl.F_SETFL, fcntl.fcntl(f, fcntl.F_GETFL) | os.O_NONBLOCK)
ctl, pending, status, hung, pty_open, stdin_open, ctl_open = b'', b'', None, None, True, True, True
def out(data):
    view = memoryview(data)
    while view:
        try:
            n = os.write(1, view); view = view[n:]
        except BlockingIOError:
            select.select([], [1], [])
while True:
    if status is None:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p == pid: status = st
    if hung is not None and status is None and time.monotonic() - hung > 3:
        os.kill(pid, signal.SIGKILL); hung = time.monotonic() + 3600
    readers = ([fd] if pty_open else []) + ([0] if stdin_open and not pending else []) + ([3] if ctl_open else [])
    writers = [fd] if pending and pty_open else []
    ready, writable, _ = select.select(readers, writers, [], 0.05 if status is not None else 0.2)
    if status is not None and fd not in ready: break
    if writable:
        try:
            n = os.write(fd, pending); pending = pending[n:]
        except BlockingIOError:
            pass
        except OSError:
            pending = b''
    for f in ready:
        if f == fd:
            try:
                data = os.read(fd, 16384)
            except BlockingIOError:
                continue
            except OSError as e:
                if e.errno != errno.EIO: raise
                data = b''
            if not data:
                pty_open = False
                if status is None: status = os.waitpid(pid, 0)[1]
                continue
            out(data)
        elif f == 0:
            try:
                data = os.read(0, 16384)
            except BlockingIOError:
                continue
            if data:
                pending += data; continue
            stdin_open = False
            if pty_open:
                try: os.killpg(os.getpgid(pid), signal.SIGHUP)
                except OSError: pass
            hung = time.monotonic()
        elif f == 3:
            try:
                data = os.read(3, 4096)
            except BlockingIOError:
                continue
            if not data:
                ctl_open = False; continue
            ctl += data
            while b'\n' in ctl:
                line, ctl = ctl.split(b'\n', 1)
                try:
                    c, r = (int(x) for x in line.split())
                    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', r, c, 0, 0))
                except (ValueError, OSError):
                    pass
    if not pty_open and status is not None: break
code = os.waitstatus_to_exitcode(status) if hasattr(os, 'waitstatus_to_exitcode') else (status >> 8)
sys.exit(128 - code if code < 0 else code)
`;
