"""``tf.compat.v1.gfile`` (TF1's ``tf.gfile``): ``aics.io.gfile`` under TF1's names.

TF1 spelled the functions ``Exists``, ``MakeDirs``, ``ListDirectory``,
``DeleteRecursively``...; the TF2 lower-case names work here too.
"""
from ...framework.missing_api import module_getattr
from ...io.gfile import (GFile, copy, exists, glob, isdir, join, listdir, makedirs,  # noqa: F401
                         mkdir, remove, rename, rmtree, stat, walk)

__getattr__ = module_getattr(__name__)

FastGFile = GFile
Open = GFile
Exists = exists
IsDirectory = isdir
ListDirectory = listdir
MakeDirs = makedirs
MkDir = mkdir
Glob = glob
Remove = remove
DeleteRecursively = rmtree
Rename = rename
Copy = copy
Walk = walk
Stat = stat
