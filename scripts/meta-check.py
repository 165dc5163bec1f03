#!/usr/bin/env python3
"""scripts/meta-check.py: META.json against the PGXN Meta Spec 1.0.0
(https://pgxn.org/spec/), and against the repository (scripts/test.sh runs
it; Debian packages no PGXN validator).

Checks what the spec requires of each key (required keys, types, SemVer
versions, known licence names, version ranges in prereqs, x_ for custom
keys), then that the distribution matches the repository: its version and
that of the extension are default_version from storagelab.control (1.1 ->
"1.1.0"), every file it names exists, the licence is the one in LICENSE.
Then it checks itself: broken variants of META.json must be rejected.

Prints one "ok - ..." / "not ok - ..." line per check, each problem under
it, and last "N passed, M failed".  Usage: scripts/meta-check.py [META.json]
"""
import copy
import json
import os
import re
import sys

SEMVER = re.compile(r'^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-?[A-Za-z][0-9A-Za-z-]*)?$')
LICENSES = {
    'agpl_3', 'apache_1_1', 'apache_2_0', 'artistic_1', 'artistic_2', 'bsd', 'freebsd',
    'gfdl_1_2', 'gfdl_1_3', 'gpl_1', 'gpl_2', 'gpl_3', 'lgpl_2_1', 'lgpl_3_0', 'mit',
    'mozilla_1_0', 'mozilla_1_1', 'openssl', 'perl_5', 'postgresql', 'qpl_1_0', 'ssleay',
    'sun', 'zlib', 'open_source', 'restricted', 'unrestricted', 'unknown',
}
REQUIRED = {'name', 'abstract', 'version', 'maintainer', 'license', 'provides', 'meta-spec'}
OPTIONAL = {'description', 'generated_by', 'tags', 'no_index', 'prereqs', 'release_status', 'resources'}
PHASES = {'configure', 'build', 'runtime', 'test', 'develop'}
RELATIONS = {'requires', 'recommends', 'suggests', 'conflicts'}
RANGE_OP = re.compile(r'^(==|!=|>=|<=|>|<)?\s*(.+)$')


def custom(key):
    return re.match(r'^[xX]_', key) is not None


def is_str(v):
    return isinstance(v, str) and v.strip() != ''


def check_keys(obj, where, allowed, problems):
    for k in obj:
        if k not in allowed and not custom(k):
            problems.append(f'{where}: unknown key "{k}" (custom keys start with x_)')


def check_version_range(v, where, problems):
    if v == 0 or v == '0':
        return
    if not isinstance(v, str):
        problems.append(f'{where}: a version range is a string, not {json.dumps(v)}')
        return
    for part in v.split(','):
        m = RANGE_OP.match(part.strip())
        if not m or not SEMVER.match(m.group(2).strip()):
            problems.append(f'{where}: "{part.strip()}" is not a version or "<op> version"')


def check_spec(meta):
    """Problems with META.json as PGXN Meta Spec 1.0.0 defines it."""
    p = []
    if not isinstance(meta, dict):
        return ['META.json is not a JSON object']
    for k in sorted(REQUIRED - meta.keys()):
        p.append(f'required key "{k}" is missing')
    check_keys(meta, 'top level', REQUIRED | OPTIONAL, p)

    name = meta.get('name')
    if 'name' in meta and not (isinstance(name, str) and len(name) >= 2
                               and not re.search(r'[/\\\x00-\x1f\x7f]', name)):
        p.append('name: a string of two or more characters without "/", "\\" or control characters')
    for k in ('abstract', 'description', 'generated_by'):
        if k in meta and not is_str(meta[k]):
            p.append(f'{k}: a non-empty string')
    if 'version' in meta and not (isinstance(meta['version'], str) and SEMVER.match(meta['version'])):
        p.append(f'version: "{meta["version"]}" is not a semantic version (MAJOR.MINOR.PATCH)')
    m = meta.get('maintainer')
    if 'maintainer' in meta and not (is_str(m) or (isinstance(m, list) and m and all(is_str(x) for x in m))):
        p.append('maintainer: a string or a non-empty list of strings')

    lic = meta.get('license')
    if 'license' in meta:
        if isinstance(lic, str):
            if lic not in LICENSES:
                p.append(f'license: "{lic}" is not a license name of the spec')
        elif isinstance(lic, list):
            if not lic or any(x not in LICENSES for x in lic):
                p.append('license: a list of license names of the spec')
        elif isinstance(lic, dict):
            if not lic or any(not is_str(v) for v in lic.values()):
                p.append('license: an object maps license names to URLs')
        else:
            p.append('license: a string, a list or an object')

    prov = meta.get('provides')
    if 'provides' in meta:
        if not isinstance(prov, dict) or not prov:
            p.append('provides: an object naming at least one extension')
        else:
            for ext, e in prov.items():
                w = f'provides.{ext}'
                if not isinstance(e, dict):
                    p.append(f'{w}: an object')
                    continue
                for k in ('file', 'version'):
                    if k not in e:
                        p.append(f'{w}: required key "{k}" is missing')
                check_keys(e, w, {'file', 'version', 'abstract', 'docfile'}, p)
                if 'version' in e and not (isinstance(e['version'], str) and SEMVER.match(e['version'])):
                    p.append(f'{w}.version: "{e["version"]}" is not a semantic version')
                for k in ('file', 'docfile', 'abstract'):
                    if k in e and not is_str(e[k]):
                        p.append(f'{w}.{k}: a non-empty string')

    spec = meta.get('meta-spec')
    if 'meta-spec' in meta:
        if not isinstance(spec, dict) or spec.get('version') != '1.0.0':
            p.append('meta-spec: an object with "version": "1.0.0"')
        else:
            check_keys(spec, 'meta-spec', {'version', 'url'}, p)

    if 'tags' in meta:
        t = meta['tags']
        if not isinstance(t, list) or not all(isinstance(x, str) and 0 < len(x) <= 255 for x in t):
            p.append('tags: a list of strings of 1 to 255 characters')
    if 'release_status' in meta and meta['release_status'] not in ('stable', 'testing', 'unstable'):
        p.append('release_status: one of stable, testing, unstable')
    if 'no_index' in meta:
        n = meta['no_index']
        if not isinstance(n, dict):
            p.append('no_index: an object')
        else:
            check_keys(n, 'no_index', {'file', 'directory'}, p)
            for k, v in n.items():
                if not custom(k) and not (is_str(v) or (isinstance(v, list) and all(is_str(x) for x in v))):
                    p.append(f'no_index.{k}: a string or a list of strings')
    if 'prereqs' in meta:
        pr = meta['prereqs']
        if not isinstance(pr, dict):
            p.append('prereqs: an object')
        else:
            check_keys(pr, 'prereqs', PHASES, p)
            for phase, rels in pr.items():
                if custom(phase):
                    continue
                if not isinstance(rels, dict):
                    p.append(f'prereqs.{phase}: an object')
                    continue
                check_keys(rels, f'prereqs.{phase}', RELATIONS, p)
                for rel, pkgs in rels.items():
                    if custom(rel):
                        continue
                    if not isinstance(pkgs, dict):
                        p.append(f'prereqs.{phase}.{rel}: an object')
                        continue
                    for pkg, rng in pkgs.items():
                        check_version_range(rng, f'prereqs.{phase}.{rel}.{pkg}', p)
    if 'resources' in meta:
        r = meta['resources']
        if not isinstance(r, dict):
            p.append('resources: an object')
        else:
            check_keys(r, 'resources', {'homepage', 'bugtracker', 'repository'}, p)
            if 'homepage' in r and not is_str(r['homepage']):
                p.append('resources.homepage: a URL')
            for k, allowed in (('bugtracker', {'web', 'mailto'}), ('repository', {'url', 'web', 'type'})):
                if k in r:
                    if not isinstance(r[k], dict):
                        p.append(f'resources.{k}: an object')
                    else:
                        check_keys(r[k], f'resources.{k}', allowed, p)
    return p


def check_repo(meta, root):
    """Problems with META.json as a description of this repository."""
    p = []
    control = open(os.path.join(root, 'storagelab.control')).read()
    m = re.search(r"^default_version\s*=\s*'([^']*)'", control, re.M)
    default = m.group(1) if m else '?'
    semver = default + '.0' * (2 - default.count('.'))
    if meta.get('version') != semver:
        p.append(f'version is "{meta.get("version")}"; default_version {default} makes it "{semver}"')
    ext = (meta.get('provides') or {}).get('storagelab')
    if not isinstance(ext, dict):
        p.append('provides names no extension "storagelab"')
    else:
        if ext.get('version') != semver:
            p.append(f'provides.storagelab.version is "{ext.get("version")}", not "{semver}"')
        for k in ('file', 'docfile'):
            if k in ext and not os.path.isfile(os.path.join(root, str(ext[k]))):
                p.append(f'provides.storagelab.{k}: {ext[k]} is not a file in the repository')
    if meta.get('license') != 'postgresql':
        p.append(f'license is "{meta.get("license")}"; LICENSE is the PostgreSQL Licence ("postgresql")')
    lic = os.path.join(root, 'LICENSE')
    if not os.path.isfile(lic) or 'PostgreSQL License' not in open(lic).read():
        p.append('LICENSE is missing or is not the PostgreSQL Licence')
    return p


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, 'META.json')
    passed = failed = 0

    def report(ok, what, problems=()):
        nonlocal passed, failed
        if ok:
            passed += 1
            print(f'ok - {what}')
        else:
            failed += 1
            print(f'not ok - {what}')
            for x in problems:
                print(f'#   {x}')

    try:
        meta = json.load(open(path))
    except (OSError, ValueError) as e:
        report(False, f'{path} is JSON', [str(e)])
        print(f'{passed} passed, {failed} failed')
        return 1
    report(True, 'META.json is JSON')
    p = check_spec(meta)
    report(not p, 'META.json is valid against the PGXN Meta Spec 1.0.0', p)
    p = check_repo(meta, root)
    report(not p, 'META.json describes this repository (version, files, licence)', p)

    # The checker rejects what the spec forbids.
    def broken(change):
        m = copy.deepcopy(meta)
        change(m)
        return check_spec(m)
    variants = [
        ('without "version"', lambda m: m.pop('version')),
        ('with version "1.1"', lambda m: m.update(version='1.1')),
        ('with license "PostgreSQL Licence"', lambda m: m.update(license='PostgreSQL Licence')),
        ('with a provided extension without "file"', lambda m: m['provides']['storagelab'].pop('file')),
        ('with an unknown key "homepage"', lambda m: m.update(homepage='x')),
        ('with meta-spec version "2.0.0"', lambda m: m['meta-spec'].update(version='2.0.0')),
        ('with a prereq version "15"', lambda m: m.setdefault('prereqs', {}).update(runtime={'requires': {'PostgreSQL': '15'}})),
    ]
    for what, change in variants:
        report(bool(broken(change)), f'the check rejects META.json {what}')
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
