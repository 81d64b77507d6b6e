"""Domain errors of every service.  Protocol edges map them in one place each
(WebHDFS RemoteException JSON in hopshive.webhdfs.errors, Thrift exceptions in the metastore)."""


class HopsHiveError(Exception):
    """Base of every error a client may be told about."""


class NamespaceError(HopsHiveError):
    """A file-system operation was refused; the message is safe to show the client."""


class FileNotFound(NamespaceError):
    pass


class FileAlreadyExists(NamespaceError):
    pass


class ParentNotDirectory(NamespaceError):
    pass


class PathIsNotEmptyDirectory(NamespaceError):
    pass


class AccessDenied(NamespaceError):
    pass


class InvalidPath(NamespaceError):
    pass


class InvalidArgument(NamespaceError):
    pass


class SubtreeLocked(NamespaceError):
    """Another operation is deleting or moving a directory that contains the path."""


class AlreadyBeingCreated(NamespaceError):
    """The file is being written by another client."""


class FileUnderConstruction(NamespaceError):
    """The file is still being written and cannot be read yet."""


class CorruptReplica(NamespaceError):
    """A block replica's bytes do not match their checksums (or the replica is missing)."""


class BlocksUnavailable(NamespaceError):
    """No replica of a block could be read, or too few could be written."""


class AuthenticationError(HopsHiveError):
    """A caller that did not prove who it is: no credentials, or only a name."""


class InvalidToken(AuthenticationError):
    """A delegation token that is forged, damaged, expired, cancelled or unknown."""
