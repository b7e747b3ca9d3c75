/* placeholder, filled in below */
#include "postgres.h"
