file(REMOVE_RECURSE
  "libimpulse.a"
)
