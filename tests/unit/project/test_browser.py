"""The browser harness (tests/browser.py) against pages written here: it
must see a clean page as clean, and see each way a page can look wrong
to a person -- an image that does not decode, a console error, an
uncaught exception, a resource from off the machine. One browser per
test (about 2-3 s each)."""
import base64
import struct
import zlib

import pytest

from tests import browser

PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'


def png(w, h):
    """A valid w x h PNG, one grey level per row, made by hand."""
    def chunk(kind, data):
        return (struct.pack('>I', len(data)) + kind + data
                + struct.pack('>I', zlib.crc32(kind + data)))
    rows = b''.join(b'\x00' + bytes([40 * y % 256]) * w for y in range(h))
    return (PNG_SIGNATURE
            + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 0, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))


def page(tmp_path, title, body):
    path = tmp_path / 'page.html'
    path.write_text('<!doctype html><html><head><meta charset="utf-8">'
                    '<title>%s</title></head><body>%s</body></html>'
                    % (title, body))
    return str(path)


def test_a_self_contained_page_reads_clean(tmp_path, monkeypatch):
    browser.require()
    # the temp profile must go where we can see that it was removed
    temp = tmp_path / 'temp'
    temp.mkdir()
    monkeypatch.setattr('tempfile.tempdir', str(temp))
    uri = 'data:image/png;base64,' + base64.b64encode(png(4, 3)).decode()
    path = page(tmp_path, 'Fabric report',
                '<h1>Results</h1><img src="%s" alt="utilisation">'
                '<svg width="40" height="20"><rect width="40" height="20"'
                ' fill="teal"/></svg><p>All flows done.</p>' % uri)
    shot = tmp_path / 'shot.png'
    r = browser.inspect(path, screenshot=str(shot))
    assert r['title'] == 'Fabric report'
    assert r['images'] == [{'src': uri[:80], 'alt': 'utilisation',
                            'complete': True, 'natural_width': 4,
                            'natural_height': 3}]
    assert r['broken'] == []
    assert r['console'] == []
    assert r['requests'] == []
    assert 'All flows done.' in r['text']
    assert shot.read_bytes().startswith(PNG_SIGNATURE)
    assert list(temp.iterdir()) == []


def test_a_broken_image_and_script_errors_are_reported(tmp_path):
    browser.require()
    path = page(tmp_path, 'Broken',
                '<img src="data:image/png;base64,AAAA" alt="nothing">'
                "<script>console.error('boom'); undefinedFunction();"
                '</script>')
    r = browser.inspect(path)
    assert [i['alt'] for i in r['broken']] == ['nothing']
    assert r['broken'][0]['natural_width'] == 0
    assert any('SEVERE' in m and '"boom"' in m for m in r['console']), \
        r['console']
    assert any('Uncaught ReferenceError' in m
               and 'undefinedFunction' in m for m in r['console']), \
        r['console']
    assert r['requests'] == []


def test_an_off_machine_image_is_a_request_and_broken(tmp_path):
    browser.require()
    url = 'http://example.invalid/x.png'
    path = page(tmp_path, 'Remote', '<img src="%s" alt="remote">' % url)
    # a load that waited on the network would raise TimeoutError
    r = browser.inspect(path, timeout_s=10)
    assert r['requests'] == [url]
    assert [i['src'] for i in r['broken']] == [url]
    assert r['seconds'] < 10


def test_a_missing_prerequisite_skips_locally(monkeypatch):
    monkeypatch.setattr(browser, 'available', lambda: 'no chromium here')
    monkeypatch.delenv('CI', raising=False)
    with pytest.raises(pytest.skip.Exception, match='no chromium here'):
        browser.require()


def test_a_missing_prerequisite_fails_under_ci(monkeypatch):
    monkeypatch.setattr(browser, 'available', lambda: 'no chromium here')
    monkeypatch.setenv('CI', 'true')
    with pytest.raises(pytest.fail.Exception, match='no chromium here'):
        browser.require()


def test_a_missing_binary_is_the_reason(tmp_path, monkeypatch):
    monkeypatch.setattr(browser, 'CHROMEDRIVER', str(tmp_path / 'nope'))
    assert str(tmp_path / 'nope') in browser.available()
