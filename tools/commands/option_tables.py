"""The option tables of the commands the policy lets run without asking.

Which options exist and which take a value come from the programs on Debian 12
(GNU coreutils 9.1, grep 3.8, sed 4.9, diffutils 3.8, gzip 1.12, file 5.44), drafted
and checked by `scripts/option_tables.py`; which options write files or run code is
curated by hand. A command without a table keeps the lists of `permissions.yaml`
(`value_options`, `flag_rules`), where a long flag also matches its abbreviations.

Python, not YAML beside `permissions.yaml`: these describe the programs, not the
person's policy (no one should loosen "sed -e takes a value"), they are checked by
the type checker and the script, and the policy needs no second file to load.
"""

from __future__ import annotations

from ducklm.tools.commands.getopt import OptionSpec

RUNS = "runs a program"
RUNS_FILE = "runs a program read from a file"
LOADS = "loads code into the program"
WRITES_FILE = "writes a file"
WRITES_MAGIC = "writes a compiled magic file"
SETS_CLOCK = "sets the clock"
OTHER_FOLDER = "runs the command in another folder, which the policy does not follow"
SETS_VARIABLE = "sets a variable the command may obey"
LOGIN = "starts the command as a login shell would be, which reads profile files"

_GNU: dict[str, OptionSpec] = {
    "ls": OptionSpec(
        short="1ABCDFGHI:LNQRST:UXZabcdfghiklmnop:qrstuvw:x",
        long=(
            "all almost-all author escape block-size= ignore-backups color? directory dired "
            "classify? file-type format= full-time group-directories-first no-group "
            "human-readable si dereference-command-line dereference-command-line-symlink-to-dir "
            "hide= hyperlink? indicator-style= inode ignore= kibibytes dereference "
            "numeric-uid-gid literal hide-control-chars show-control-chars quote-name "
            "quoting-style= reverse recursive size sort= time= time-style= tabsize= width= "
            "context zero help version"
        ),
    ),
    "cat": OptionSpec(
        short="AETbenstuv",
        long=(
            "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting "
            "help version"
        ),
    ),
    "head": OptionSpec(
        short="c:n:qvz",
        long=("bytes= lines= quiet silent verbose zero-terminated help version"),
        numbers=True,
    ),
    "tail": OptionSpec(
        short="Fc:fn:qs:vz",
        long=(
            "bytes= follow? lines= max-unchanged-stats= pid= quiet silent retry sleep-interval= "
            "verbose zero-terminated help version"
        ),
        numbers=True,
    ),
    "wc": OptionSpec(
        short="Lclmw",
        long=("bytes chars lines files0-from= max-line-length words help version"),
    ),
    "grep": OptionSpec(
        short="A:B:C:D:EFGHILPRTUVZabcd:e:f:hilm:noqrsvwxz",
        long=(
            "extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case "
            "no-ignore-case word-regexp line-regexp null-data no-messages invert-match version "
            "help max-count= byte-offset line-number line-buffered with-filename no-filename "
            "label= only-matching quiet silent binary-files= text directories= devices= recursive "
            "dereference-recursive include= exclude= exclude-from= exclude-dir= "
            "files-without-match files-with-matches count initial-tab null before-context= "
            "after-context= context= group-separator= no-group-separator color? colour? binary"
        ),
        numbers=True,
    ),
    "stat": OptionSpec(
        short="Lc:ft",
        long=("dereference file-system cached= printf= terse help version format="),
    ),
    "du": OptionSpec(
        short="0B:DHLPSX:abcd:hklmst:x",
        long=(
            "null all apparent-size block-size= bytes total dereference-args max-depth= "
            "files0-from= human-readable inodes dereference count-links no-dereference "
            "separate-dirs si summarize threshold= time= time-style= exclude-from= exclude= "
            "one-file-system help version"
        ),
    ),
    "df": OptionSpec(
        short="B:HPTahiklt:vx:",
        long=(
            "all block-size= human-readable si inodes local no-sync output? portability sync "
            "total type= print-type exclude-type= help version"
        ),
    ),
    "sort": OptionSpec(
        short="CMRS:T:Vbcdfghik:mno:rst:uz",
        long=(
            "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
            "ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort "
            "random-source= reverse sort= version-sort batch-size= check? compress-program= debug "
            "files0-from= key= merge output= stable buffer-size= field-separator= "
            "temporary-directory= parallel= unique zero-terminated help version"
        ),
        writes=("-o", "--output"),
        risky={"--compress-program": RUNS},
    ),
    "uniq": OptionSpec(
        short="Dcdf:is:uw:z",
        long=(
            "count repeated all-repeated? skip-fields= group? ignore-case skip-chars= unique "
            "zero-terminated check-chars= help version"
        ),
    ),
    "cut": OptionSpec(
        short="Mb:c:d:f:nsz",
        long=(
            "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= "
            "zero-terminated help version"
        ),
    ),
    "paste": OptionSpec(
        short="d:sz",
        long=("delimiters= serial zero-terminated help version"),
    ),
    "join": OptionSpec(
        short="1:2:a:e:ij:o:t:v:z",
        long=("ignore-case check-order nocheck-order header zero-terminated help version"),
    ),
    "comm": OptionSpec(
        short="123z",
        long=("check-order nocheck-order output-delimiter= total zero-terminated help version"),
    ),
    "tr": OptionSpec(
        short="Ccdst",
        long=("complement delete squeeze-repeats truncate-set1 help version"),
    ),
    "tac": OptionSpec(
        short="brs:",
        long=("before regex separator= help version"),
    ),
    "fold": OptionSpec(
        short="bsw:",
        long=("bytes spaces width= help version"),
        numbers=True,
    ),
    "fmt": OptionSpec(
        short="cg:p:stuw:",
        long=(
            "crown-margin prefix= split-only tagged-paragraph uniform-spacing width= goal= help "
            "version"
        ),
    ),
    "expand": OptionSpec(
        short="it:",
        long=("initial tabs= help version"),
    ),
    "unexpand": OptionSpec(
        short="at:",
        long=("all first-only tabs= help version"),
    ),
    "diff": OptionSpec(
        short="BC:D:EF:I:NS:TU:W:X:Zabcdeilnpqrstuvwx:y",
        long=(
            "normal brief report-identical-files context? unified? ed rcs side-by-side width= "
            "left-column suppress-common-lines show-c-function show-function-line= label= "
            "expand-tabs initial-tab tabsize= suppress-blank-empty paginate recursive "
            "no-dereference new-file unidirectional-new-file ignore-file-name-case "
            "no-ignore-file-name-case exclude= exclude-from= starting-file= from-file= to-file= "
            "ignore-case ignore-tab-expansion ignore-trailing-space ignore-space-change "
            "ignore-all-space ignore-blank-lines ignore-matching-lines= text strip-trailing-cr "
            "ifdef= old-group-format= new-group-format= unchanged-group-format= "
            "changed-group-format= line-format= old-line-format= new-line-format= "
            "unchanged-line-format= minimal horizon-lines= speed-large-files color? palette= help "
            "version"
        ),
        numbers=True,
    ),
    "cmp": OptionSpec(
        short="bi:ln:sv",
        long=("print-bytes ignore-initial= verbose bytes= quiet silent help version"),
    ),
    "basename": OptionSpec(
        short="as:z",
        long=("multiple suffix= zero help version"),
    ),
    "dirname": OptionSpec(
        short="z",
        long=("zero help version"),
    ),
    "realpath": OptionSpec(
        short="LPemqsz",
        long=(
            "canonicalize-existing canonicalize-missing logical physical quiet relative-to= "
            "relative-base= strip no-symlinks zero help version"
        ),
    ),
    "readlink": OptionSpec(
        short="efmnqsvz",
        long=(
            "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent "
            "verbose zero help version"
        ),
    ),
    "md5sum": OptionSpec(
        short="bctwz",
        long=("binary check tag text zero ignore-missing quiet status strict warn help version"),
    ),
    "cksum": OptionSpec(
        short="a:cl:wz",
        long=(
            "algorithm= check length= tag untagged zero ignore-missing quiet status strict warn "
            "debug help version"
        ),
    ),
    "base64": OptionSpec(
        short="diw:",
        long=("decode ignore-garbage wrap= help version"),
    ),
    "basenc": OptionSpec(
        short="diw:",
        long=(
            "base64 base64url base32 base32hex base16 base2msbf base2lsbf decode ignore-garbage "
            "wrap= z85 help version"
        ),
    ),
    "nl": OptionSpec(
        short="b:d:f:h:i:l:n:ps:v:w:",
        long=(
            "body-numbering= section-delimiter= footer-numbering= header-numbering= "
            "line-increment= join-blank-lines= number-format= no-renumber number-separator= "
            "starting-line-number= number-width= help version"
        ),
    ),
    "od": OptionSpec(
        short="A:N:S:abcdfij:lost:vw::x",
        long=(
            "address-radix= endian= skip-bytes= read-bytes= strings? format= output-duplicates "
            "width? traditional help version"
        ),
    ),
    "sed": OptionSpec(
        short="Ee:f:i::l:nrsuz",
        long=(
            "quiet silent debug expression= file= follow-symlinks in-place? line-length= posix "
            "regexp-extended separate sandbox unbuffered null-data help version"
        ),
    ),
    "date": OptionSpec(
        short="I::Rd:f:r:s:u",
        long=(
            "date= debug file= iso-8601? resolution rfc-email rfc-3339= reference= set= utc "
            "universal help version"
        ),
        risky={"-s": SETS_CLOCK, "--set": SETS_CLOCK},
    ),
    "uname": OptionSpec(
        short="aimnoprsv",
        long=(
            "all kernel-name nodename kernel-release kernel-version machine processor "
            "hardware-platform operating-system help version"
        ),
    ),
    "printenv": OptionSpec(
        short="0",
        long=("null help version"),
    ),
    "nproc": OptionSpec(
        short="",
        long=("all ignore= help version"),
    ),
    "touch": OptionSpec(
        short="acd:fhmr:t:",
        long=("no-create date= no-dereference reference= time= help version"),
    ),
    "mkdir": OptionSpec(
        short="Zm:pv",
        long=("mode= parents verbose context? help version"),
    ),
    "cp": OptionSpec(
        short="HLPRS:TZabdfilnprst:uvx",
        long=(
            "archive attributes-only backup? copy-contents force interactive link dereference "
            "no-clobber no-dereference preserve? no-preserve= parents recursive reflink? "
            "remove-destination sparse= strip-trailing-slashes symbolic-link suffix= "
            "target-directory= no-target-directory update verbose one-file-system context? help "
            "version"
        ),
    ),
    "mv": OptionSpec(
        short="S:TZbfint:uv",
        long=(
            "backup? force interactive no-clobber strip-trailing-slashes suffix= "
            "target-directory= no-target-directory update verbose context help version"
        ),
    ),
    "ln": OptionSpec(
        short="FLPS:Tbdfinrst:v",
        long=(
            "backup? directory force interactive logical no-dereference physical relative "
            "symbolic suffix= target-directory= no-target-directory verbose help version"
        ),
    ),
    "tee": OptionSpec(
        short="aip",
        long=("append ignore-interrupts output-error? help version"),
    ),
    "install": OptionSpec(
        short="CDS:TZbcdg:m:o:pst:v",
        long=(
            "backup? compare directory group= mode= owner= preserve-timestamps strip "
            "strip-program= suffix= target-directory= no-target-directory verbose "
            "preserve-context context? help version"
        ),
    ),
    "mktemp": OptionSpec(
        short="dp:qtu",
        long=("directory dry-run quiet suffix= tmpdir? help version"),
    ),
    "gzip": OptionSpec(
        short="123456789LNS:Vcdfhklnqrtv",
        long=(
            "stdout decompress force help keep list license no-name name quiet recursive "
            "rsyncable suffix= synchronous= test verbose version fast best"
        ),
    ),
    "file": OptionSpec(
        short="0CF:LNPSZbcde:f:hiklm:nprsvz",
        long=(
            "help version magic-file= uncompress uncompress-noreport brief checking-printout "
            "exclude= exclude-quiet= files-from= separator= mime apple extension mime-type "
            "mime-encoding keep-going list dereference no-dereference no-buffer no-pad print0 "
            "preserve-date parameter raw special-files no-sandbox compile debug"
        ),
        risky={"-C": WRITES_MAGIC, "--compile": WRITES_MAGIC},
    ),
    "id": OptionSpec(
        short="GZagnruz",
        long=("context group groups name real user zero help version"),
    ),
    "tty": OptionSpec(
        short="s",
        long=("silent quiet help version"),
    ),
    "uptime": OptionSpec(
        short="Vhps",
        long=("pretty help since version"),
    ),
    "free": OptionSpec(
        short="Vbc:ghklms:tvw",
        long=(
            "bytes kilo mega giga tera peta kibi mebi gibi tebi pebi human si lohi total "
            "committed seconds= count= wide help version"
        ),
    ),
    "groups": OptionSpec(
        short="",
        long=("help version"),
    ),
    "whoami": OptionSpec(
        short="",
        long=("help version"),
    ),
    "rev": OptionSpec(
        short="Vh",
        long=("help version"),
    ),
    "sleep": OptionSpec(
        short="",
        long=("help version"),
    ),
}

# awk: the union of gawk 5 and mawk 1.3 (Debian's awk, nawk and mawk are mawk; gawk
# is often installed as awk elsewhere). `-W name` is `--name` in both, abbreviable.
_AWK = OptionSpec(
    short="F:f:v:W:bcCd::D::e:E:ghi:l:L::nNo::Op::MPrSstVYZ:",
    long=(
        "assign= bignum characters-as-bytes copyright csv debug? dump-variables? exec= "
        "field-separator= file= gen-pot help include= lint? lint-old load= "
        "non-decimal-data no-optimize optimize persist? posix pretty-print? profile? "
        "re-interval sandbox source= traditional use-lc-numeric version "
        "dump interactive posix_space random= sprintf= usage"
    ),
    risky={
        **dict.fromkeys(("-f", "--file", "-E", "--exec"), RUNS_FILE),
        **dict.fromkeys(("-i", "--include", "-l", "--load"), LOADS),
        **dict.fromkeys(("-o", "--pretty-print", "-p", "--profile"), WRITES_FILE),
        **dict.fromkeys(("-d", "--dump-variables", "-D", "--debug"), WRITES_FILE),
    },
    stop=True,
    w_long=True,
)

# Wrappers: options end at the command they run (getopt's "+"). env 9.1 also takes the
# blanks of a `#!/usr/bin/env -S` line as options that do nothing.
_WRAPPERS: dict[str, OptionSpec] = {
    "env": OptionSpec(
        short="C:iS:u:v0 \t",
        long=(
            "ignore-environment null unset= chdir= default-signal? ignore-signal? "
            "block-signal? list-signal-handling debug split-string= help version"
        ),
        risky={"-C": OTHER_FOLDER, "--chdir": OTHER_FOLDER},
        stop=True,
    ),
    "timeout": OptionSpec(
        short="k:s:v",
        long="foreground kill-after= preserve-status signal= verbose help version",
        stop=True,
    ),
    "nice": OptionSpec(short="n:", long="adjustment= help version", stop=True, numbers=True),
    "ionice": OptionSpec(
        short="c:n:p:P:u:tVh",
        long="class= classdata= pid= pgid= uid= ignore help version",
        stop=True,
    ),
    "nohup": OptionSpec(long="help version", stop=True),
    "setsid": OptionSpec(short="cfwhV", long="ctty fork wait help version", stop=True),
    "stdbuf": OptionSpec(short="i:o:e:", long="input= output= error= help version", stop=True),
    # GNU time 1.9 (`/usr/bin/time`; the shell keyword is read by the parse)
    "time": OptionSpec(
        short="af:o:pqvV",
        long="append format= output= portability quiet verbose help version",
        writes=("-o", "--output"),
        stop=True,
    ),
    "xargs": OptionSpec(
        short="0a:E:e::I:i::L:l::n:oprs:txP:d:",
        long=(
            "null arg-file= delimiter= eof? replace? max-lines? max-args= open-tty "
            "interactive no-run-if-empty max-chars= verbose show-limits exit max-procs= "
            "process-slot-var= help version"
        ),
        risky={"--process-slot-var": SETS_VARIABLE},
        stop=True,
    ),
    # procps-ng 4.0 (the union of its releases): -d takes an attached optional value,
    # -g and -x are flags, and -x runs the words as a command line, not through sh -c.
    "watch": OptionSpec(
        short="bCced::fghq:n:prs:twvx",
        long=(
            "color no-color differences? help interval= beep errexit follow chgexit "
            "equexit= exec precise no-rerun shotsdir= no-title no-wrap version"
        ),
        risky={"-s": WRITES_FILE, "--shotsdir": WRITES_FILE},
        stop=True,
    ),
    # util-linux 2.38: `flock FILE -c CODE` is read after the file, not by getopt
    "flock": OptionSpec(
        short="sexnouFw:E:hV",
        long=(
            "shared exclusive unlock nonblock nb close no-fork timeout= wait= "
            "conflict-exit-code= verbose help version"
        ),
        stop=True,
    ),
    "chroot": OptionSpec(long="groups= userspec= skip-chdir help version", stop=True),
    # bash builtins: short options only
    "command": OptionSpec(short="pvV", stop=True, abbrev=False),
    "exec": OptionSpec(short="cla:", risky={"-l": LOGIN, "-a": LOGIN}, stop=True, abbrev=False),
}

# git's own options (before the subcommand), as git.c reads them: exact names only
_GIT = OptionSpec(
    short="C:c:hpPv",
    long=(
        "help version exec-path? html-path man-path info-path paginate no-pager "
        "no-replace-objects no-lazy-fetch bare git-dir= work-tree= namespace= "
        "super-prefix= config-env= literal-pathspecs glob-pathspecs noglob-pathspecs "
        "icase-pathspecs no-optional-locks list-cmds= attr-source="
    ),
    stop=True,
    abbrev=False,
)

OPTION_SPECS: dict[str, OptionSpec] = {
    **_GNU,
    **_WRAPPERS,
    "git": _GIT,
    "egrep": _GNU["grep"],
    "fgrep": _GNU["grep"],
    "zgrep": _GNU["grep"],
    "sha1sum": _GNU["md5sum"],
    "sha256sum": _GNU["md5sum"],
    "sha512sum": _GNU["md5sum"],
    "b2sum": OptionSpec(short=_GNU["md5sum"].short + "l:", long=_GNU["md5sum"].long + " length="),
    "gunzip": _GNU["gzip"],
    "zcat": _GNU["gzip"],
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _AWK),
}
"""Each command's option table, by name."""

FREE_FORM = frozenset({
    "echo", "printf", "test", "[", "expr", "true", "false", ":", "yes", "seq", "exit",
    "return", "break", "continue", "shift", "wait", "jobs", "umask", "ulimit", "dirs",
})  # fmt: skip
"""Commands whose words are data, not options: `echo -n` prints, `test -f` tests."""

CODE_OPTION_TOOLS = frozenset({"sed", "find", "tar", "dd", "git", "xargs"})
"""Commands without a risky entry in their table whose options can still run a program
or write a file (read by their rules in `argument_rules`): `sed -e`, `find -exec`,
`tar --to-command`. A word of theirs the policy cannot read may be one of those."""
