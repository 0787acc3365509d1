"""The reference solutions of the katas, one file each, written for reading (`toolcall kata
solution NAME` prints one). They use the standard library only, and toolcall never imports them:
the checker runs them, as it runs a user's file, in a process of its own. So each file is public by
its path, and keeps its name."""
