"""Open a local HTML file in real headless Chromium (Debian's chromium
and chromium-driver, through selenium) and report what a person would
see: the title, every image and whether it decoded, the console's
warnings and errors, any resource fetched from off the machine, the
text, and optionally a full-page screenshot.

The browser is offline by construction: besides the flags that turn off
its background services, every host name (IP literals included) resolves
to nothing, so a page that points off the machine fails at once instead
of waiting on a closed network -- and the attempt is still reported.
Each inspect() starts its own browser in a fresh temporary profile and
leaves no process or file behind."""
import json
import os
import shutil
import signal
import tempfile
import time


from tests.support import prerequisite

CHROMIUM = '/usr/bin/chromium'
CHROMEDRIVER = '/usr/bin/chromedriver'
MAX_SHOT_PX = 20000
FLAGS = ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic',
         '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync',
         '--disable-dev-shm-usage',
         # clients2.google.com/time, asked even with the flags above
         '--disable-features=NetworkTimeServiceQuerying',
         # Chromium still tries the default search engine's start page,
         # accounts.google.com and the extension updater at start-up: no
         # name resolves, so none of it (nor any page request) leaves
         '--host-resolver-rules=MAP * ~NOTFOUND')
LOCAL = ('file:', 'data:', 'blob:', 'about:')

# every image: what it points at, and whether it decoded to pixels
IMAGES_JS = """return Array.from(document.images).map(i => ({
  src: (i.currentSrc || i.src || '').slice(0, 80), alt: i.alt,
  complete: i.complete, natural_width: i.naturalWidth,
  natural_height: i.naturalHeight}));"""
# what the page fetched, failed loads included (Chromium lists those too)
RESOURCES_JS = """return performance.getEntriesByType('resource')
  .map(e => e.name);"""
# web fonts and two frames, so the screenshot and the text are settled
SETTLE_JS = """const done = arguments[arguments.length - 1];
(document.fonts ? document.fonts.ready : Promise.resolve()).then(() =>
  requestAnimationFrame(() => requestAnimationFrame(() => done(null))));"""


def available():
    """None if a browser check can run here, else the reason it cannot."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return '%s is missing (apt-get install chromium ' \
                   'chromium-driver)' % path
    try:
        import selenium.webdriver  # noqa: F401
    except ImportError as e:
        return 'selenium is not importable (%s)' % e
    return None


def require():
    """Return if a browser check can run; otherwise skip the test with the
    reason -- or fail it under CI (CI=true), where a missing prerequisite
    must not pass as a silent skip."""
    why = available()
    if why is None:
        return
    prerequisite.missing('browser check impossible: %s' % why)


def _stat(pid):
    """(state, start time) of a process from /proc/PID/stat, or None if
    it is gone."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(')') + 2:].split()
    return rest[0], int(rest[19])


def _running(pid, start):
    """Whether the process with this pid and start time still runs (a
    zombie left to init to reap runs no more)."""
    st = _stat(pid)
    return st is not None and st[1] == start and st[0] != 'Z'


def _processes(root, tmp):
    """(pid, start time) of root, of its descendants, and of the crash
    handlers Chromium double-forks away from it: those name our private
    temp dir (their crash database is under it), so they are ours."""
    parent, mine = {}, []
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            with open('/proc/%d/stat' % pid) as f:
                s = f.read()
            with open('/proc/%d/cmdline' % pid, 'rb') as f:
                cmd = f.read()
        except OSError:
            continue
        rest = s[s.rindex(')') + 2:].split()
        parent[pid] = int(rest[1]), int(rest[19])
        if tmp.encode() in cmd:
            mine.append((pid, int(rest[19])))
    tree, grew = {root}, True
    while grew:
        kids = {p for p, (pp, _) in parent.items() if pp in tree} - tree
        grew = bool(kids)
        tree |= kids
    mine += [(p, parent[p][1]) for p in tree if p in parent]
    return sorted(set(mine))


def _wait_gone(procs, timeout_s):
    """Those of procs still running after up to timeout_s."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        left = [(p, s) for p, s in procs if _running(p, s)]
        if not left:
            return []
        time.sleep(0.05)
    return [(p, s) for p, s in procs if _running(p, s)]


def _shut_down(driver, service, tmp):
    """Quit the browser and chromedriver, make sure every process of the
    session has exited (killing by exact pid and start time only what
    outlives quit), and remove the temp profile."""
    proc = getattr(service, 'process', None)
    procs = []
    if proc is not None and proc.poll() is None:
        procs = _processes(proc.pid, tmp)
    try:
        if driver is not None:
            driver.quit()
    finally:
        if proc is not None:
            service.stop()  # a no-op after quit; needed if Chrome() failed
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        left = _wait_gone(procs, 10)
        for pid, start in left:
            try:
                if _running(pid, start):
                    os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        left = _wait_gone(left, 5)
        shutil.rmtree(tmp, ignore_errors=True)
    if proc is not None and proc.poll() is None:
        raise RuntimeError('chromedriver (pid %d) did not exit' % proc.pid)
    if left:
        raise RuntimeError('browser processes did not exit: %s'
                           % ', '.join(str(p) for p, _ in left))


def _start(tmp, width, height):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.add_argument('--user-data-dir=' + os.path.join(tmp, 'profile'))
    opts.add_argument('--window-size=%d,%d' % (width, height))
    opts.set_capability('goog:loggingPrefs',
                        {'browser': 'ALL', 'performance': 'ALL'})
    # the network events only: the page and tracing ones would be noise
    opts.add_experimental_option('perfLoggingPrefs',
                                 {'enableNetwork': True, 'enablePage': False})
    # Chromium keeps its crash database under $XDG_CONFIG_HOME, not under
    # --user-data-dir: this keeps it out of ~/.config and in the temp dir
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(tmp, 'config'))
    service = Service(CHROMEDRIVER, env=env)
    return webdriver, service, opts


def _network(entries, page_url):
    """Off-machine URLs in the performance log from the page's own
    request on (what Chromium fetched at start-up is not the page's)."""
    urls, started = [], False
    for e in entries:
        m = json.loads(e['message'])['message']
        p = m.get('params', {})
        if m['method'] == 'Network.requestWillBeSent':
            url = p['request']['url']
            started = started or url == page_url
        elif m['method'] == 'Network.webSocketCreated':
            url = p['url']
        else:
            continue
        if started and not url.startswith(LOCAL):
            urls.append(url)
    return urls


def inspect(html_path, screenshot=None, width=1280, height=2000,
            timeout_s=30, script=None):
    """Open html_path (a local file) in headless Chromium, wait for the
    load event, and return what a person would see:
      title    document.title
      images   [{'src' (first 80 chars), 'alt', 'complete',
                 'natural_width', 'natural_height'}] for every <img>
      broken   the images that did not decode (naturalWidth 0 or
               not complete)
      console  every console warning and error and every uncaught JS
               error, as 'LEVEL source: message'
      requests URLs of every resource not from file: or data: (and
               not blob:/about:) the page tried to load -- a
               self-contained page has none
      text     document.body.innerText
      seconds  how long this call took
      script   what the JavaScript ``script`` returned (if given), run
               once the page has settled
    A full-page PNG is written to `screenshot` if given (the window is
    made as tall as the page, at most 20000 px). A page that has not
    loaded after timeout_s raises TimeoutError; a missing file,
    FileNotFoundError."""
    t0 = time.monotonic()
    # Selenium Manager never runs with an explicit driver path; offline
    # all the same in case it ever did
    os.environ.setdefault('SE_OFFLINE', 'true')
    from selenium.common.exceptions import TimeoutException

    if not os.path.isfile(html_path):
        # Chromium would show its own error page, and we would report it
        raise FileNotFoundError(html_path)
    url = 'file://' + os.path.abspath(html_path)
    tmp = tempfile.mkdtemp(prefix='netsched-browser-')
    driver = service = None
    try:
        webdriver, service, opts = _start(tmp, width, height)
        driver = webdriver.Chrome(service=service, options=opts)
        driver.set_page_load_timeout(timeout_s)
        driver.set_script_timeout(timeout_s)
        driver.get_log('performance')  # drop the start-up page's events
        try:
            driver.get(url)
        except TimeoutException:
            raise TimeoutError('%s did not load within %ss'
                               % (html_path, timeout_s)) from None
        driver.execute_async_script(SETTLE_JS)
        images = driver.execute_script(IMAGES_JS)
        out = {
            'title': driver.title,
            'images': images,
            'broken': [i for i in images
                       if not i['complete'] or i['natural_width'] == 0],
            'text': driver.execute_script(
                'return document.body ? document.body.innerText : "";'),
        }
        out['script'] = driver.execute_script(script) if script else None
        resources = driver.execute_script(RESOURCES_JS)
        if screenshot is not None:
            h = driver.execute_script(
                'return [Math.max(document.documentElement.scrollHeight,'
                ' document.body ? document.body.scrollHeight : 0),'
                ' window.outerHeight - window.innerHeight];')
            # the window's height includes a (headless) frame
            driver.set_window_size(width, min(h[0], MAX_SHOT_PX) + h[1])
            driver.execute_async_script(SETTLE_JS)
            with open(screenshot, 'wb') as f:
                f.write(driver.get_screenshot_as_png())
        out['console'] = ['%s %s: %s' % (e['level'], e.get('source', ''),
                                         e['message'])
                          for e in driver.get_log('browser')
                          if e['level'] in ('SEVERE', 'WARNING')]
        seen = set()
        out['requests'] = [
            u for u in [r for r in resources if not r.startswith(LOCAL)]
            + _network(driver.get_log('performance'), url)
            if not (u in seen or seen.add(u))]
    finally:
        if service is not None:
            _shut_down(driver, service, tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    out['seconds'] = round(time.monotonic() - t0, 2)
    return out
